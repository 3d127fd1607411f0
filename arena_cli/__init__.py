"""The official command-line client of Quatre Sept Arena for bot authors: ``python -m arena_cli``.

Sign in once (the token is kept per server), upload a bot file or folder and watch its
validation, start a round-robin and follow it, save or open a replay, and debug a played match
against a local bot. Talks to the REST API as its schema describes it (``/api/schema/``).
"""
