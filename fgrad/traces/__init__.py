"""The five traces (tape, dual numbers, staging, batching, Taylor) and their helpers: graphs, passes, tangents, transposes."""
