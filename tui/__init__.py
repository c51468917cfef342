"""The reviewer's desk (Textual), laid out like harlequin (the TUI issue)."""
