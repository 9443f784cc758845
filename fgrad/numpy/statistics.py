"""Statistics and running reductions: var, std, cumsum, median, percentile, nan-functions."""
