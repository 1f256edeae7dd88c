"""The fact view: the pure temporal function from statements to intervals (``temporal``) and the
checks over statements and view (``lint``)."""
