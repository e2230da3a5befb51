"""Reading a vault folder: which files belong to which project, and what each one says."""
