"""Who may see and do what. Every tool, page and command asks this package; none decides alone."""
