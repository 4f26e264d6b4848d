"""Flow nodes: the nodes that route, filter and shape items between others (n8n's core nodes)."""
