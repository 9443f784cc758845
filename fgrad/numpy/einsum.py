"""einsum: any subscripts, repeated indices and ellipsis."""
