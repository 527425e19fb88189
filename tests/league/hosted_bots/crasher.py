"""A hosted bot that passes its validation and fails in the league: it plays like a calling station against the
sample bot ``caller`` (the validation's opponent) and exits at once, status 3, against anyone else."""

import os

from arena_sdk import Action, Bot, Request, call, check, run


class Crasher(Bot):
    def act(self, request: Request) -> Action:
        if "caller" not in request.names:
            print("crasher: not the validation's opponent, leaving", flush=True)
            os._exit(3)
        return check() if request.legal.can_check else call()


raise SystemExit(run(Crasher(), name="crasher").exit_code)
