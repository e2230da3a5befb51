"""The one search engine every door calls: trigram candidates, then exact verification."""
