"""The scoreboard as a web page (shoectl web): Starlette, uvicorn, server-sent events."""
