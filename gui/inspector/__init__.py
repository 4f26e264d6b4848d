"""The parameter inspector: a form built from the selected node type's `Params` JSON schema."""
