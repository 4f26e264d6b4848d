"""n8n's HTTP Request node and its tool variant: request building, sending, pagination, output."""
