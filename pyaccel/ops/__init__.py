"""Built-in ops: the op table, WGSL kernel families (package data) and their launchers."""
