"""The server's background services, started and stopped by the lifespan (app/main.py)."""
