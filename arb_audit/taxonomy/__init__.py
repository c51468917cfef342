"""Route, failure and task definitions as data (the contract of ../shared/design/TAXONOMY.md).

Pure data: this room imports nothing heavy and no other room, so every part of arb-audit can use it.
"""
