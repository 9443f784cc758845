"""Tools over the table and the tapes: the rule checker, the coverage table, recorded tapes."""
