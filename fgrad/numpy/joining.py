"""Joining, splitting, repeating and padding arrays: hstack, split, tile, pad, insert, ..."""
