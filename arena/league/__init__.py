"""The league (layer above the runner): a long-running host where registered bots connect with API keys from
anywhere, are matched continuously, rated after every match and published as they go (``arena host``)."""
