"""The optional rules, one module each: what the rule says, as functions of a position.

``instant`` (four 7s, four 8s), ``redeal``, ``poules`` (announced before play), ``politaine``
(the run of three tricks and its bonus), ``signals``, ``low_lead``, ``melds``, ``claim``.
``engine/state.py`` sequences a deal and calls a rule's module only where the rule set switches
the rule on, so the main game's hot path never pays for a rule it does not play.
Imports nothing of Django or the sandbox.
"""
