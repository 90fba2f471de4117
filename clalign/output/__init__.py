"""Search result formats as BLAST+ writes them."""
