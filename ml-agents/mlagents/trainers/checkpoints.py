"""Checkpoints that survive crashes: :class:`CheckpointStore`.

The checkpoints of one policy live in one folder, under TensorFlow's names: ``model-<step>.index``
and ``model-<step>.data-*`` per checkpoint, and the text file ``checkpoint`` listing the kept ones
(newest last), which ``tf.train.latest_checkpoint`` reads.

Saving never leaves that folder in a state ``--load`` cannot continue from, even when the process
is killed (SIGKILL) at any moment:

1. the checkpoint is written in full into a fresh temporary folder beside the others (a killed save
   leaves only that folder, removed by the next store on the same folder);
2. its files are moved into place with ``os.replace`` (atomic), the data files first and the
   ``.index`` file last: a checkpoint whose index is in the folder is complete;
3. the ``checkpoint`` list is rewritten last (a temporary file, then ``os.replace``);
4. only then are the files of checkpoints beyond ``max_to_keep`` deleted.

Loading (:meth:`CheckpointStore.newest_readable`) tries the newest checkpoint first and falls back to
older ones when it cannot be read (truncated or damaged files, e.g. copied partly or written by a
tool that was killed), warning about each one it skips.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from collections.abc import Callable

import tensorflow as tf

LOGGER = logging.getLogger("mlagents.trainers")

__all__ = ["CheckpointStore", "NoReadableCheckpoint", "checkpoint_problem"]

#: Name of TensorFlow's list of checkpoints in a checkpoint folder.
STATE_FILE = "checkpoint"
_TEMPORARY_PREFIX = ".saving-"
_STATE_LINE = re.compile(r'^\s*(model_checkpoint_path|all_model_checkpoint_paths)\s*:\s*"(.*)"\s*$')


class NoReadableCheckpoint(Exception):
    """The folder has checkpoints, but none of them can be read.

    :ivar damaged: the checkpoints tried (newest first) and why each could not be read.
    """

    def __init__(self, directory: str, damaged: list[tuple[str, str]]) -> None:
        names = ", ".join(os.path.basename(prefix) for prefix, _ in damaged)
        super().__init__(
            f"No checkpoint in {directory} can be read: {names} "
            f"{'is' if len(damaged) == 1 else 'are'} damaged (truncated or partly written; first problem: "
            f"{damaged[0][1]}). Start without --load (or with another --run-id) to train from scratch."
        )
        self.damaged = damaged


def checkpoint_problem(prefix: str) -> str | None:
    """Why the checkpoint ``prefix`` (a path without ``.index``) cannot be read, or None when every
    one of its tensors reads back (TensorFlow checks each tensor's checksum as it reads it)."""
    try:
        reader = tf.train.load_checkpoint(prefix)
        for name in reader.get_variable_to_shape_map():
            reader.get_tensor(name)
    except Exception as error:  # DataLossError, NotFoundError, IndexError...: all mean unreadable
        text = str(error).strip()
        return f"{type(error).__name__}: {text.splitlines()[0] if text else 'no message'}"
    return None


def _step_of(name: str) -> int:
    match = re.search(r"-(\d+)$", name)
    return int(match.group(1)) if match else -1


class CheckpointStore:
    """Writes and restores the checkpoints of ``checkpoint`` in ``directory``.

    :param checkpoint: what to save (a ``tf.train.Checkpoint`` of the model and optimizer).
    :param directory: the checkpoint folder (created on the first save).
    :param max_to_keep: the newest checkpoints kept (``keep_checkpoints``); older ones are deleted.
    :param name: the checkpoints' name: ``<name>-<step>``.
    :param before_switch: test hook, called with the temporary prefix after a checkpoint was written
        and before its files are moved into place.
    """

    def __init__(
        self,
        checkpoint: tf.train.Checkpoint,
        directory: str,
        max_to_keep: int,
        name: str = "model",
        before_switch: Callable[[str], None] | None = None,
    ) -> None:
        self.checkpoint = checkpoint
        self.directory = directory
        self.max_to_keep = max(1, int(max_to_keep))
        self.name = name
        self.before_switch = before_switch
        self._remove_abandoned_saves()

    # ------------------------------------------------------------------ the list of checkpoints

    def listed(self) -> list[str]:
        """The names in the ``checkpoint`` list, oldest first (newest last), without folders."""
        try:
            with open(os.path.join(self.directory, STATE_FILE)) as state:
                lines = state.read().splitlines()
        except (OSError, UnicodeDecodeError):
            return []
        newest: str | None = None
        names: list[str] = []
        for line in lines:
            match = _STATE_LINE.match(line)
            if match is None:
                continue
            name = os.path.basename(match.group(2))
            if match.group(1) == "model_checkpoint_path":
                newest = name
            elif name not in names:
                names.append(name)
        if newest is not None:
            names = [other for other in names if other != newest] + [newest]
        return names

    def candidates(self) -> list[str]:
        """Checkpoints to try when loading, newest first: the list's newest, then every checkpoint
        found in the folder (listed or not, e.g. one whose save was killed before the list was
        updated) by step, highest first. Full prefixes."""
        listed = self.listed()
        on_disk = []
        if os.path.isdir(self.directory):
            pattern = re.compile(rf"^({re.escape(self.name)}-\d+)\.index$")
            on_disk = [match.group(1) for match in map(pattern.match, os.listdir(self.directory)) if match]
        ordered = listed[-1:] + sorted(set(listed[:-1]) | set(on_disk), key=_step_of, reverse=True)
        unique = list(dict.fromkeys(ordered))
        return [os.path.join(self.directory, name) for name in unique]

    def _write_list(self, names: list[str]) -> None:
        lines = [f'model_checkpoint_path: "{names[-1]}"'] + [
            f'all_model_checkpoint_paths: "{name}"' for name in names
        ]
        fd, temporary = tempfile.mkstemp(prefix=f"{_TEMPORARY_PREFIX}{STATE_FILE}-", dir=self.directory)
        try:
            with os.fdopen(fd, "w") as state:
                state.write("\n".join(lines) + "\n")
                state.flush()
                os.fsync(state.fileno())
            os.replace(temporary, os.path.join(self.directory, STATE_FILE))
        except BaseException:
            if os.path.exists(temporary):
                os.remove(temporary)
            raise
        _fsync_directory(self.directory)

    # ------------------------------------------------------------------ saving

    def save(self, step: int) -> str:
        """Save a checkpoint ``<name>-<step>`` (replacing one of that name); returns its prefix."""
        os.makedirs(self.directory, exist_ok=True)
        name = f"{self.name}-{int(step)}"
        temporary_dir = tempfile.mkdtemp(prefix=_TEMPORARY_PREFIX, dir=self.directory)
        try:
            # Created on first use: then written like tf.train.CheckpointManager's checkpoints,
            # which a restore that checks for unmatched objects expects.
            self.checkpoint.save_counter.assign_add(1)
            self.checkpoint.write(os.path.join(temporary_dir, name))
            files = sorted(os.listdir(temporary_dir), key=lambda file: file.endswith(".index"))
            for file in files:
                _fsync_file(os.path.join(temporary_dir, file))
            if self.before_switch is not None:
                self.before_switch(os.path.join(temporary_dir, name))
            # An index in the folder means its checkpoint is complete: it is moved in last, and a
            # checkpoint of the same name being replaced loses its index first.
            old_index = os.path.join(self.directory, f"{name}.index")
            if os.path.exists(old_index):
                os.remove(old_index)
            for file in files:
                os.replace(os.path.join(temporary_dir, file), os.path.join(self.directory, file))
            _fsync_directory(self.directory)
        finally:
            shutil.rmtree(temporary_dir, ignore_errors=True)
        previous = [listed for listed in self.listed() if listed != name]
        kept = (previous + [name])[-self.max_to_keep :]
        self._write_list(kept)
        for dropped in previous:
            if dropped not in kept:
                self._delete(dropped)
        return os.path.join(self.directory, name)

    def _delete(self, name: str) -> None:
        index = os.path.join(self.directory, f"{name}.index")
        if os.path.exists(index):
            os.remove(index)  # first: without its index the rest is never taken for a checkpoint
        for file in os.listdir(self.directory):
            if file.startswith(f"{name}.data-"):
                os.remove(os.path.join(self.directory, file))

    def _remove_abandoned_saves(self) -> None:
        """Remove what saves that were killed left (temporary folders and list files)."""
        if not os.path.isdir(self.directory):
            return
        for entry in os.listdir(self.directory):
            if entry.startswith(_TEMPORARY_PREFIX):
                path = os.path.join(self.directory, entry)
                if os.path.isdir(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.remove(path)

    # ------------------------------------------------------------------ loading

    def newest_readable(self) -> str | None:
        """The newest checkpoint that reads back, warning about each newer one that does not.

        :returns: its prefix, or None when the folder has no checkpoint at all.
        :raises NoReadableCheckpoint: there are checkpoints, and none reads back.
        """
        damaged: list[tuple[str, str]] = []
        for prefix in self.candidates():
            problem = checkpoint_problem(prefix)
            if problem is None:
                if damaged:
                    LOGGER.warning(
                        "Loading the checkpoint %s instead (the newest readable one).",
                        os.path.basename(prefix),
                    )
                return prefix
            LOGGER.warning(
                "The checkpoint %s cannot be read (%s): it is damaged (truncated or partly written).",
                prefix,
                problem,
            )
            damaged.append((prefix, problem))
        if damaged:
            raise NoReadableCheckpoint(self.directory, damaged)
        return None


def _fsync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_directory(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # not every file system syncs directories
    finally:
        os.close(fd)
