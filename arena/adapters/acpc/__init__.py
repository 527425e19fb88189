"""The ACPC bridge: any client of the Annual Computer Poker Competition's protocol (version 2.0.0 of the ACPC
server's ``dealer``) plays in the arena, unchanged.

The bridge is an arena bot (``arena_sdk``): it starts the ACPC client with ``HOST PORT`` appended to its command,
listens on a loopback port for it, and turns every ActionRequest, HandStart and HandEnd into the MATCHSTATE lines
the ACPC dealer would have sent, and every reply into an arena Action:

* ``gamedef``: ACPC game definition files, and how they map onto the arena's table (and back);
* ``matchstate``: MATCHSTATE lines from the arena's public history of a hand;
* ``replies``: an ACPC client's reply as an arena Action, with the ACPC dealer's treatment of invalid actions;
* ``connection``: the TCP connection to the client, line by line;
* ``bridge``: the bot itself, and ``python -m arena.adapters.acpc`` (``arena acpc-bridge``).
"""
