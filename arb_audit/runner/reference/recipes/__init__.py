"""The code the scripted agents write into their workspaces, as text they copy (never imported here).

Each file is a complete program an agent would write for the reference world; a scenario writes some of
them, sometimes with a bug spliced in (see ``arb_audit.runner.reference.scenarios``), and runs them as
commands.
"""
