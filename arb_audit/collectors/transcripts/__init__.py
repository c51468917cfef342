"""Agent transcripts (Claude Code, Codex, Gemini CLI, OpenCode, and their readable renderings).

:func:`arb_audit.collectors.transcripts.read.read_transcript` reads any of them into a
:class:`arb_audit.collectors.transcripts.events.Transcript`; the command timeline and the rebuilt code history
are made from that.
"""
