"""Selecting and reordering entries: take, compress, sort, flip, roll, diagonals, triangles."""
