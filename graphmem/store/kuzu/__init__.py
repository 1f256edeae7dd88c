"""The Kuzu engine (the only one today): the store over one embedded Kuzu database (``store``) and the
named migrations between its on-disk layouts (``migrations``). Nothing outside this folder imports
Kuzu or writes Cypher."""
