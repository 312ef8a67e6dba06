"""dibs's run history, read from Redis over RESP and parsed from its documented format (src/history.rs's
module docs): no dibs code decides what it says. A job's stream is `dibs:` (the default key prefix,
README's Connections) `U+001F {history}:JOB`; each
entry has one field, `run`: `ended;task;ms;least;fence;start;pid;host;instance;by;name`."""

from . import resp

STREAM = "dibs:\x1f{history}:"


class Entry:
    def __init__(self, entry_id, fields):
        self.id = entry_id
        self.ms = int(entry_id.split("-")[0])  # the server's clock when it was written
        value = fields.get("run", "")
        self.raw = value
        parts = value.split(";", 10)
        self.valid = len(parts) == 11
        if not self.valid:
            return
        self.ended, self.task = parts[0], parts[1]
        self.fence = int(parts[4]) if parts[4].isdigit() else -1
        self.instance, self.by, self.name = parts[8], parts[9], parts[10]

    def __repr__(self):
        return "%s %s;%s fence=%s %s" % (self.id, self.ended, self.task, self.fence, self.name)


def read(masters, job):
    """The job's entries, oldest first, from whichever master holds the history's slot; None when
    no master answered for it."""
    key = STREAM + job
    for server in masters:
        try:
            raw = resp.call(server.port, "XRANGE", key, "-", "+", timeout=3.0)
        except resp.RespError as e:
            if str(e).startswith("MOVED"):
                continue
            raise
        except (OSError, ConnectionError):
            continue
        entries = []
        for entry_id, flat in raw or []:
            fields = {resp.text(flat[i]): resp.text(flat[i + 1]) for i in range(0, len(flat), 2)}
            entries.append(Entry(resp.text(entry_id), fields))
        return entries
    return None
