"""What tests and bench scripts share: the qualification gate's scorer (docparse_score)."""
