"""The services every door calls. Each takes a Principal and asks the access module for every decision."""
