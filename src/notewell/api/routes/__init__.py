"""The REST resources, one router per concept: me and tokens, knowledge, brains, memories."""
