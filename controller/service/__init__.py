"""The running table: the session between device, journal and procedure, and its process edges."""
