"""`hermes demo`: the whole story offline, with a real demo desktop app and its plugin."""
