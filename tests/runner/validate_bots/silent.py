"""A bot that starts and never joins: it sleeps."""

import time

time.sleep(600)
