"""A minimal BuildGrid worker ("bot") for the remote-execution test
(tests/bazel.rs) and docs/bazel.md: BuildGrid on PyPI ships the server
but not its bots (buildbox-worker and buildbox-run are C++, in no
registry this project can use), so this one speaks the Remote Workers API
itself, with BuildGrid's own protos and CAS client.

It takes one lease at a time: accepts it, fetches the action's input root
into a fresh directory (files hard-linked from a local cache by digest, as
BuildGrid's buildbox-casd keeps one: the tool binary is fetched once, not
per action), runs the command there with exactly the
command's environment, uploads the declared output files and directories
(as Trees) with stdout and stderr, and completes the lease with the
ActionResult. Not a sandbox: the action runs as this process's user.

usage: python buildgrid_bot.py GRPC_ADDRESS WORKDIR BOT_NAME [SECONDS]
(exits after SECONDS, default 600, so a forgotten bot cannot linger).
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

import grpc
from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2 as re_pb2
from buildgrid._protos.google.devtools.remoteworkers.v1test2 import bots_pb2, bots_pb2_grpc
from buildgrid.client.cas import download, upload

INSTANCE = ""


def run_action(channel, payload, workdir):
    """Runs one action; its ActionResult."""
    action = re_pb2.Action()
    if payload.Is(re_pb2.Action.DESCRIPTOR):
        payload.Unpack(action)
    else:
        digest = re_pb2.Digest()
        payload.Unpack(digest)
        with download(channel, instance=INSTANCE) as d:
            action = d.get_message(digest, re_pb2.Action())
    root = tempfile.mkdtemp(dir=workdir, prefix="action-")
    try:
        with download(channel, instance=INSTANCE) as d:
            command = d.get_message(action.command_digest, re_pb2.Command())
            fetch_tree(d, action.input_root_digest, root, os.path.join(workdir, "cas"))
        wd = os.path.join(root, command.working_directory)
        for f in command.output_files:
            os.makedirs(os.path.dirname(os.path.join(wd, f)), exist_ok=True)
        for o in command.output_directories:
            os.makedirs(os.path.join(wd, o), exist_ok=True)
        env = {v.name: v.value for v in command.environment_variables}
        argv = list(command.arguments)
        if not os.path.isabs(argv[0]) and os.sep in argv[0]:
            argv[0] = os.path.join(wd, argv[0])
        p = subprocess.run(argv, cwd=wd, env=env, capture_output=True, timeout=600)
        result = re_pb2.ActionResult(exit_code=p.returncode)
        with upload(channel, instance=INSTANCE) as u:
            result.stdout_digest.CopyFrom(u.put_blob(_io(p.stdout), length=len(p.stdout)))
            result.stderr_digest.CopyFrom(u.put_blob(_io(p.stderr), length=len(p.stderr)))
            for f in command.output_files:
                path = os.path.join(wd, f)
                if os.path.isfile(path):
                    result.output_files.add(
                        path=f,
                        digest=u.upload_file(path, queue=False),
                        is_executable=os.access(path, os.X_OK),
                    )
            for o in command.output_directories:
                path = os.path.join(wd, o)
                if os.path.isdir(path):
                    result.output_directories.add(path=o, tree_digest=u.upload_tree(path, queue=False))
        return result
    finally:
        shutil.rmtree(root, ignore_errors=True)


def fetch_tree(d, digest, path, cache):
    """The Directory `digest` at `path`, its files linked from `cache`."""
    os.makedirs(path, exist_ok=True)
    os.makedirs(cache, exist_ok=True)
    directory = d.get_message(digest, re_pb2.Directory())
    for f in directory.files:
        cached = os.path.join(cache, "%s_%d%s" % (f.digest.hash, f.digest.size_bytes, "x" if f.is_executable else ""))
        if not os.path.exists(cached):
            partial = cached + ".partial"
            d.download_file(f.digest, partial, is_executable=f.is_executable, queue=False)
            os.chmod(partial, 0o555 if f.is_executable else 0o444)
            os.replace(partial, cached)
        os.link(cached, os.path.join(path, f.name))
    for sub in directory.directories:
        fetch_tree(d, sub.digest, os.path.join(path, sub.name), cache)
    for link in directory.symlinks:
        os.symlink(link.target, os.path.join(path, link.name))


def _io(data):
    import io

    return io.BytesIO(data)


def main():
    address, workdir, name = sys.argv[1], sys.argv[2], sys.argv[3]
    stop_at = time.time() + (float(sys.argv[4]) if len(sys.argv) > 4 else 600.0)
    os.makedirs(workdir, exist_ok=True)
    channel = grpc.insecure_channel(address)
    grpc.channel_ready_future(channel).result(timeout=60)
    bots = bots_pb2_grpc.BotsStub(channel)
    session = bots_pb2.BotSession(bot_id=name, status=bots_pb2.BotStatus.Value("OK"))
    session.worker.devices.add(handle=name)
    session = bots.CreateBotSession(bots_pb2.CreateBotSessionRequest(parent=INSTANCE, bot_session=session))
    pending = bots_pb2.LeaseState.Value("PENDING")
    active = bots_pb2.LeaseState.Value("ACTIVE")
    completed = bots_pb2.LeaseState.Value("COMPLETED")
    while time.time() < stop_at:
        todo = [lease for lease in session.leases if lease.state in (pending, active)]
        for lease in todo:
            if lease.state == pending:
                lease.state = active
        if todo:
            # Accept, then run and report each.
            session = bots.UpdateBotSession(
                bots_pb2.UpdateBotSessionRequest(name=session.name, bot_session=session), timeout=30
            )
            for lease in session.leases:
                if lease.state != active:
                    continue
                try:
                    result = run_action(channel, lease.payload, workdir)
                    lease.result.Pack(result)
                    lease.status.code = 0
                except Exception as e:  # reported on the lease, the bot goes on
                    lease.status.code = 13
                    lease.status.message = str(e)
                lease.state = completed
        completed_only = [lease for lease in session.leases if lease.state == completed]
        session = bots.UpdateBotSession(
            bots_pb2.UpdateBotSessionRequest(name=session.name, bot_session=session), timeout=30
        )
        if completed_only:
            # The server has the results; drop the finished leases.
            keep = [lease for lease in session.leases if lease.state != completed]
            del session.leases[:]
            session.leases.extend(keep)
        if not session.leases:
            time.sleep(0.05)


if __name__ == "__main__":
    main()
