"""Search statistics as BLAST+ 2.12 computes them (Karlin-Altschul, Gumbel/Spouge)."""
