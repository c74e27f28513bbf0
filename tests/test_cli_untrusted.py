"""The command line on untrusted input and odd outputs: one-line errors, nothing left behind.

Non-finite values, huge feature indices and huge files are refused before anything of their
size is allocated (the large cases run under tiny ``--memory-budget`` values, or in a
subprocess under an address-space limit); output files appear only once complete, and a
path that is not a regular file is written in place, never replaced.
"""

import errno
import io
import os
import re
import signal
import stat
import subprocess
import sys
import tempfile
import threading

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, make_classification
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import sparsekernel.cli._demo as demo_module
import sparsekernel.cli._files as files_module
import sparsekernel.cli._predict as predict_module
import sparsekernel.cli._scale as scale_module
import sparsekernel.cli._train as train_module
from sparsekernel import LowRankSVC, ReducedSVC
from sparsekernel.cli import main
from sparsekernel.cli._estimators import make_estimator
from sparsekernel.cli._files import BYTES_PER_FEATURE
from sparsekernel.cli._main import build_parser
from sparsekernel.datasets import load_svmlight_path
from sparsekernel.io import load, save
from sparsekernel.utils import DEFAULT_MEMORY_BUDGET, format_bytes, parse_memory_budget

X, Y = make_classification(n_samples=120, n_features=5, n_informative=3, random_state=0)
Y = 2.0 * Y - 1.0
GOOD = "1 1:0.5 2:1\n-1 1:0.25 2:0.3\n1 1:0.2 2:0.1\n-1 1:0.7 2:0.4\n"
#: Line 3 of GOOD with one bad field; the value the message quotes.
BAD_VALUES = {
    "nan-feature": ("1 1:nan 2:0.1", "feature 1 is nan"),
    "inf-feature": ("1 1:0.2 2:inf", "feature 2 is inf"),
    "overflow-feature": ("1 1:1e400 2:0.1", "feature 1 is inf"),
    "nan-label": ("nan 1:0.2 2:0.1", "the label is nan"),
    "overflow-label": ("-1e400 1:0.2 2:0.1", "the label is -inf"),
}
NO_ROOM = "No space left on device"


def _run(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def _assert_error(status, err, expected_status, *fragments):
    assert status == expected_status, err
    assert err.startswith("sparsekernel: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err


def _bad_file(tmp_path, kind):
    lines = GOOD.splitlines()
    lines[2] = BAD_VALUES[kind][0]
    path = tmp_path / "bad.svm"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def files(tmp_path):
    train, test = tmp_path / "train.svm", tmp_path / "test.svm"
    dump_svmlight_file(X[:80], Y[:80], str(train), zero_based=False)
    dump_svmlight_file(X[80:], Y[80:], str(test), zero_based=False)
    model = tmp_path / "given.skm"
    save(ReducedSVC(n_basis=10, random_state=0).fit(X[:80], Y[:80]), model)
    return train, test, model


def _entries(folder):
    return sorted(p.name for p in folder.iterdir())


# --- non-finite values ----------------------------------------------------------------------

@pytest.mark.parametrize("kind", sorted(BAD_VALUES))
def test_scale_refuses_non_finite_values_and_saves_no_range(kind, tmp_path, capsys):
    data = _bad_file(tmp_path, kind)
    status, out, err = _run(capsys, "scale", "-s", tmp_path / "range", data)
    _assert_error(status, err, 1, "bad.svm", "line 3", BAD_VALUES[kind][1], "finite")
    assert out == ""
    assert _entries(tmp_path) == ["bad.svm"]


@pytest.mark.parametrize("kind", sorted(BAD_VALUES))
def test_train_refuses_non_finite_values_with_the_line(kind, tmp_path, capsys):
    data = _bad_file(tmp_path, kind)
    status, _, err = _run(capsys, "train", data, tmp_path / "m.skm")
    _assert_error(status, err, 1, "bad.svm", "line 3", BAD_VALUES[kind][1])
    assert _entries(tmp_path) == ["bad.svm"]


def test_streamed_train_refuses_non_finite_values_with_the_line(tmp_path, capsys):
    data = _bad_file(tmp_path, "nan-feature")
    status, _, err = _run(capsys, "train", "--model", "lowrank", "--chunk-size", "2", data,
                          tmp_path / "m.skm")
    _assert_error(status, err, 1, "bad.svm", "line 3", "feature 1 is nan")
    assert _entries(tmp_path) == ["bad.svm"]


@pytest.mark.parametrize("kind", ["nan-label", "nan-feature"])
def test_predict_refuses_non_finite_values_with_the_line(kind, files, tmp_path, capsys):
    data = _bad_file(tmp_path, kind)
    status, out, err = _run(capsys, "predict", data, files[2], tmp_path / "out.txt")
    _assert_error(status, err, 1, "bad.svm", "line 3", BAD_VALUES[kind][1])
    assert out == "" and not (tmp_path / "out.txt").exists()


@pytest.mark.parametrize("content, line", [
    ("x\n-1 1\n1 0 nan\n", 3),
    ("x\n-1 1\n1 0 1e400\n", 3),
    ("x\n-inf 1\n1 0 1\n", 2),
    ("y\n0 1\nnan 1\nx\n-1 1\n1 0 1\n", 3),
])
def test_scale_refuses_non_finite_range_files(content, line, files, tmp_path, capsys):
    range_file = tmp_path / "range"
    range_file.write_text(content)
    status, out, err = _run(capsys, "scale", "-r", range_file, files[0])
    _assert_error(status, err, 1, "range", f"line {line}", "finite")
    assert out == ""


@pytest.mark.parametrize("option", ["-l", "-u"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_scale_refuses_non_finite_limits(option, value, files, capsys):
    status, _, err = _run(capsys, "scale", f"{option}={value}", files[0])
    _assert_error(status, err, 2, option, "finite", repr(value))


# --- interrupts and output files ------------------------------------------------------------

def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


def test_interrupt_in_the_training_score_pass_saves_nothing(files, tmp_path, monkeypatch,
                                                            capsys):
    # The training accuracy is computed after the fit: a Ctrl-C there must not leave the
    # model on disk (it was saved before that pass), nor touch an older model file.
    model_file = tmp_path / "old.skm"
    model_file.write_bytes(b"an older model")
    monkeypatch.setattr(ReducedSVC, "predict", _interrupt)
    before = _entries(tmp_path)
    status, out, err = _run(capsys, "train", "--n-basis", "10", files[0], model_file)
    assert (status, out, err) == (130, "", "sparsekernel: interrupted\n")
    assert model_file.read_bytes() == b"an older model"
    assert _entries(tmp_path) == before


def test_interrupt_while_saving_leaves_no_file(files, tmp_path, monkeypatch, capsys):
    def save_then_interrupt(model, path):
        save(model, path)  # the whole model is on disk under the temporary name
        raise KeyboardInterrupt

    monkeypatch.setattr(train_module, "save", save_then_interrupt)
    before = _entries(tmp_path)
    status, _, _ = _run(capsys, "train", "-q", "--n-basis", "10", files[0],
                        tmp_path / "new.skm")
    assert status == 130
    assert _entries(tmp_path) == before


def test_interrupted_scale_saves_no_range_file(files, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(scale_module, "_write_scaled", _interrupt)
    before = _entries(tmp_path)
    status, _, err = _run(capsys, "scale", "-s", tmp_path / "range", files[0])
    assert (status, err) == (130, "sparsekernel: interrupted\n")
    assert _entries(tmp_path) == before


def test_interrupted_predict_writes_no_output_file(files, tmp_path, monkeypatch, capsys):
    import sparsekernel.cli._predict as predict_module

    def write_then_interrupt(path, predictions, table):
        with open(path, "w") as out:
            out.write("1\n")
        raise KeyboardInterrupt

    monkeypatch.setattr(predict_module, "_write", write_then_interrupt)
    before = _entries(tmp_path)
    status, _, _ = _run(capsys, "predict", files[1], files[2], tmp_path / "out.txt")
    assert status == 130
    assert _entries(tmp_path) == before


class _InterruptedStream(io.StringIO):
    """Standard output on which a Ctrl-C lands while writing (a terminal paused by Ctrl-S)."""

    def write(self, text):
        raise KeyboardInterrupt


class _FullStream(io.StringIO):
    """Standard output on a full disk: every write fails."""

    def write(self, text):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _writing_argv(command, files, target):
    """A command that prints to standard output and writes ``target`` (an older file)."""
    return {"train": ["train", "--n-basis", "10", files[0], target],
            "predict": ["predict", files[1], files[2], target],
            "scale": ["scale", "-s", target, files[0]]}[command]


@pytest.mark.parametrize("command", ["train", "predict"])
def test_interrupt_while_printing_saves_nothing(command, files, tmp_path, monkeypatch,
                                                capsys):
    # The summary (or the accuracy) goes out before the file is put in place: a Ctrl-C
    # while it is blocked leaves no file and the older one as it was.
    target = tmp_path / "older"
    target.write_bytes(b"an older file")
    before = _entries(tmp_path)
    monkeypatch.setattr(sys, "stdout", _InterruptedStream())
    status = main([str(a) for a in _writing_argv(command, files, target)])
    assert (status, capsys.readouterr().err) == (130, "sparsekernel: interrupted\n")
    assert target.read_bytes() == b"an older file" and _entries(tmp_path) == before


@pytest.mark.parametrize("command", ["train", "predict", "scale"])
def test_full_standard_output_is_named_and_saves_nothing(command, files, tmp_path,
                                                         monkeypatch, capsys):
    target = tmp_path / "older"
    target.write_bytes(b"an older file")
    before = _entries(tmp_path)
    monkeypatch.setattr(sys, "stdout", _FullStream())
    status = main([str(a) for a in _writing_argv(command, files, target)])
    _assert_error(status, capsys.readouterr().err, 1,
                  f"cannot write to standard output: {NO_ROOM}")
    assert target.read_bytes() == b"an older file" and _entries(tmp_path) == before


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_train_to_a_full_standard_output_in_a_process(files, tmp_path):
    # As 'sparsekernel train ... > /dev/full': one line, status 1, no model, and nothing
    # more at exit (the interpreter's last flush of standard output).
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [sys.executable, "-m", "sparsekernel.cli", "train", "--n-basis", "10",
             str(files[0]), str(tmp_path / "m.skm")],
            stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert (result.returncode, result.stderr) == (
        1, f"sparsekernel: error: cannot write to standard output: {NO_ROOM}\n")
    assert not (tmp_path / "m.skm").exists()


@pytest.mark.parametrize("command", ["train", "predict"])
def test_interrupt_during_the_rename_completes_the_command(command, files, tmp_path,
                                                           monkeypatch, capsys):
    # A Ctrl-C that arrives as the file is renamed into place: the command has done its
    # work, so it exits 0 with the file (never 130 with a file left).
    rename = os.replace

    def rename_then_interrupt(source, target):
        rename(source, target)
        if not os.fspath(target).endswith(".tmp"):  # the command's rename, not save's own
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(os, "replace", rename_then_interrupt)
    target = tmp_path / "new"
    status = main([str(a) for a in _writing_argv(command, files, target)])
    out, err = capsys.readouterr()
    assert (status, err) == (0, "") and out
    assert _entries(tmp_path) == sorted(["given.skm", "new", "test.svm", "train.svm"])
    if command == "train":
        assert type(load(target)) is ReducedSVC


def test_interrupt_after_the_rename_completes_the_command(files, tmp_path, monkeypatch,
                                                          capsys):
    # A Ctrl-C once the model is in place (here in the clean-up of the temporary name)
    # exits 0: the state matches the status.
    remove = os.unlink

    def unlink(path, *args, **kwargs):
        if os.fspath(path).endswith(".tmp"):
            raise KeyboardInterrupt
        return remove(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)
    status = main(["train", "--n-basis", "10", str(files[0]), str(tmp_path / "m.skm")])
    out, err = capsys.readouterr()
    assert (status, err) == (0, "") and out.startswith("ReducedSVC: ")
    assert type(load(tmp_path / "m.skm")) is ReducedSVC


def test_the_process_ignores_ctrl_c_once_its_file_is_in_place(files, tmp_path, monkeypatch,
                                                              capsys):
    # The process's own command (argv read from sys.argv) keeps ignoring SIGINT through
    # the interpreter's shutdown, where a Ctrl-C would end it by SIGINT (status 130) with
    # the model in place; a call from Python gets its handler back.
    before = signal.getsignal(signal.SIGINT)
    argv = ["train", "-q", "--n-basis", "10", str(files[0]), str(tmp_path / "m.skm")]
    assert main(argv) == 0 and signal.getsignal(signal.SIGINT) is before
    monkeypatch.setattr(sys, "argv", ["sparsekernel", *argv])
    try:
        assert main() == 0
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)
    # Without a file to commit, Ctrl-C stays as it was.
    monkeypatch.setattr(sys, "argv", ["sparsekernel", "train", "-v", "2", "--n-basis", "10",
                                      str(files[0])])
    assert main() == 0 and signal.getsignal(signal.SIGINT) is before


def _read_fifo(path, into):
    with open(path, "rb") as fh:
        into.append(fh.read())


@pytest.mark.parametrize("command", ["train", "predict", "scale"])
def test_output_to_a_named_pipe_is_written_in_place(command, files, tmp_path, capsys):
    # A path that is not a regular file (a pipe, /dev/null, /dev/stdout) is written to, as
    # LIBSVM's tools do, and never replaced by a regular file.
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    # A daemon: were the pipe replaced, its reader would wait for a writer forever.
    reader = threading.Thread(target=_read_fifo, args=(fifo, received), daemon=True)
    reader.start()
    argv = {"train": ["train", "-q", "--n-basis", "10", files[0], fifo],
            "predict": ["predict", "-q", files[1], files[2], fifo],
            "scale": ["scale", "-s", fifo, files[0]]}[command]
    status, _, err = _run(capsys, *argv)
    reader.join(timeout=30)
    assert status == 0, err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert received, "nothing was written to the pipe"
    if command == "train":
        (tmp_path / "copy.skm").write_bytes(received[0])
        assert type(load(tmp_path / "copy.skm")) is ReducedSVC
    elif command == "predict":
        assert received[0].decode().split() == [f"{v:g}" for v in
                                                load(files[2]).predict(X[80:])]
    else:
        assert received[0].startswith(b"x\n-1 1\n1 ")


def _character_device(tmp_path):
    """A node behaving as /dev/full: made in tmp_path when allowed (root), so that a
    regression replaces nothing outside it; else /dev/full itself when not root."""
    node = tmp_path / "full"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        return node
    except (PermissionError, AttributeError, OSError):
        pass
    if os.path.exists("/dev/full") and hasattr(os, "geteuid") and os.geteuid() != 0:
        return "/dev/full"
    pytest.skip("no /dev/full-like device to write to")


@pytest.mark.parametrize("command", ["train", "predict", "scale"])
def test_a_full_device_is_an_error_and_stays_a_device(command, files, tmp_path, capsys):
    device = _character_device(tmp_path)
    argv = {"train": ["train", "-q", "--n-basis", "10", files[0], device],
            "predict": ["predict", "-q", files[1], files[2], device],
            "scale": ["scale", "-s", device, files[0]]}[command]
    status, _, err = _run(capsys, *argv)
    _assert_error(status, err, 1, NO_ROOM, str(device))
    assert stat.S_ISCHR(os.stat(device).st_mode)


def test_model_file_that_is_a_directory(files, tmp_path, capsys):
    folder = tmp_path / "models"
    folder.mkdir()
    status, _, err = _run(capsys, "train", "--n-basis", "10", files[0], folder)
    _assert_error(status, err, 1, "Is a directory", "models")
    assert _entries(folder) == []


@pytest.mark.parametrize("command", ["train", "predict", "scale"])
def test_output_in_a_missing_folder_names_the_path_given(command, files, tmp_path, capsys):
    target = tmp_path / "missing" / "out"
    argv = {"train": ["train", "-q", "--n-basis", "10", files[0], target],
            "predict": ["predict", "-q", files[1], files[2], target],
            "scale": ["scale", "-s", target, files[0]]}[command]
    status, _, err = _run(capsys, *argv)
    _assert_error(status, err, 1, f"No such file or directory: '{target}'")
    assert ".tmp" not in err


def test_symbolic_link_to_a_model_stays_a_link(files, tmp_path, capsys):
    target, link = tmp_path / "target.skm", tmp_path / "link.skm"
    target.write_bytes(b"old")
    link.symlink_to(target)
    assert main(["train", "-q", "--n-basis", "10", str(files[0]), str(link)]) == 0
    assert link.is_symlink() and type(load(target)) is ReducedSVC


# --- sizes: feature indices, files, memory --------------------------------------------------

def test_feature_index_beyond_the_budget_is_refused_before_allocating(tmp_path, capsys):
    # 1 MiB allows 2**20 / 64 = 16,384 features; index 100,000 would need 6.1 MiB.
    data = tmp_path / "wide.svm"
    data.write_text("1 1:0.5\n-1 2:1 100000:0.5\n1 1:0.2\n")
    limit = format_bytes(2**20)
    for argv in (["train"], ["scale"], ["tune", "-v", "2"]):
        status, out, err = _run(capsys, *argv, "--memory-budget", "1MB", data)
        _assert_error(status, err, 1, "wide.svm", "line 2", "feature index 100000",
                      f"--memory-budget {limit}")
        assert out == ""
    assert _entries(tmp_path) == ["wide.svm"]
    status, _, err = _run(capsys, "train", "--memory-budget", "1MB", "--n-features", "20000",
                          data)
    _assert_error(status, err, 1, "--n-features 20000", f"--memory-budget {limit}")


def test_streamed_chunks_plan_their_dense_size(tmp_path, capsys):
    # Dense chunks of 100 float64 rows cost 800 bytes per feature (plus 64): 1 MiB allows
    # 1,213 features, so index 5,000 is refused before a chunk is made dense.
    data = tmp_path / "wide.svm"
    data.write_text("1 1:0.5\n-1 2:1 5000:0.5\n1 1:0.2\n")
    status, _, err = _run(capsys, "train", "--model", "lowrank", "--chunk-size", "100",
                          "--memory-budget", "1MB", data, tmp_path / "m.skm")
    _assert_error(status, err, 1, "line 2", "feature index 5000", "dense chunk of 100 rows",
                  "lower --chunk-size to 18 or less")
    assert _entries(tmp_path) == ["wide.svm"]
    # The chunk size advised fits (one more row does not).
    for rows, refused in (("19", True), ("18", False)):
        status, _, err = _run(capsys, "train", "--model", "lowrank", "--chunk-size", rows,
                              "--memory-budget", "1MB", data, tmp_path / "m.skm")
        assert ("feature index 5000" in err) is refused, err


def test_streamed_width_beyond_the_budget_alone_advises_the_budget(tmp_path, capsys):
    # Index 20,000 at 1 MiB: its per-feature arrays alone (64 bytes each, 1.2 MiB) are above
    # the budget, so no chunk size can help.
    data = tmp_path / "wide.svm"
    data.write_text("1 1:0.5\n-1 2:1 20000:0.5\n1 1:0.2\n")
    status, _, err = _run(capsys, "train", "--model", "lowrank", "--chunk-size", "100",
                          "--memory-budget", "1MB", data, tmp_path / "m.skm")
    _assert_error(status, err, 1, "line 2", "feature index 20000", "raise --memory-budget")
    assert "--chunk-size" not in err


@pytest.mark.parametrize("extra", [[], ["--model", "lowrank"], ["-v", "2"]])
def test_a_small_n_features_names_the_option(extra, files, tmp_path, capsys):
    status, _, err = _run(capsys, "train", *extra, "--n-features", "3", files[0],
                          tmp_path / "m.skm")
    _assert_error(status, err, 1, "train.svm' line 1: feature index 4 is beyond "
                  "--n-features 3", "pass a larger --n-features")
    assert "n_features=" not in err and not (tmp_path / "m.skm").exists()


_LIMITED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))
from sparsekernel.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is Linux's")
@pytest.mark.parametrize("command", ["train", "scale", "scale-r", "predict"])
def test_index_2147483647_at_the_default_budget(command, files, tmp_path):
    # The file. Never in this process: under a 3 GiB address-space limit, an attempt
    # at the 8-16 GiB per-feature arrays fails with MemoryError instead of exhausting the
    # machine.
    data = tmp_path / "wide.svm"
    data.write_text("1 1:0.5 2:1\n-1 1:0.1 2147483647:0.3\n1 1:0.2 2:0.1\n-1 2:0.4\n")
    range_file = tmp_path / "range"
    range_file.write_text("x\n-1 1\n1 0 1\n2147483647 0 1\n")
    argv = {"train": ["train", data, tmp_path / "new.skm"], "scale": ["scale", data],
            "scale-r": ["scale", "-r", range_file, files[0]],
            "predict": ["predict", data, files[2]]}[command]
    result = subprocess.run([sys.executable, "-c", _LIMITED, *map(str, argv)],
                            capture_output=True, text=True, timeout=120)
    assert "Traceback" not in result.stderr
    if command == "predict":  # the unseen feature is dropped, as svm-predict does
        assert result.returncode == 0, result.stderr
        assert "feature index 2147483647" in result.stderr
        return
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    where = "range' line 4" if command == "scale-r" else "wide.svm' line 2: feature index"
    assert where in result.stderr and "2147483647" in result.stderr
    assert f"--memory-budget {format_bytes(DEFAULT_MEMORY_BUDGET)}" in result.stderr
    assert not (tmp_path / "new.skm").exists() and result.stdout == ""


@pytest.mark.parametrize("argv", [
    ["train", "--memory-budget", "1MB"],
    ["train", "-v", "3", "--memory-budget", "1MB"],
    ["scale", "--memory-budget", "1MB"],
    ["tune", "--memory-budget", "1MB"],
], ids=["train", "train-v", "scale", "tune"])
def test_file_larger_than_the_budget(argv, tmp_path, capsys):
    # 2 MB of '0' lines: a million rows, 16 MB parsed, under a 1 MiB budget: refused once
    # the rows read pass 1 MiB.
    zeros = tmp_path / "zeros"
    zeros.write_bytes(b"0\n" * 2**20)
    status, out, err = _run(capsys, *argv, zeros)
    _assert_error(status, err, 1, "zeros", "takes more than 1 MiB", "--memory-budget 1 MiB")
    assert out == "" and _entries(tmp_path) == ["zeros"]


def test_file_larger_than_the_budget_predict_and_stream(files, tmp_path, capsys):
    zeros = tmp_path / "zeros"
    zeros.write_bytes(b"0\n" * 2**20)
    status, _, err = _run(capsys, "predict", "--memory-budget", "1MB", zeros, files[2],
                          tmp_path / "out")
    _assert_error(status, err, 1, "zeros", "takes more than 1 MiB")
    status, _, err = _run(capsys, "train", "--model", "lowrank", "--chunk-size", "100000",
                          "--memory-budget", "1MB", zeros, tmp_path / "m.skm")
    _assert_error(status, err, 1, "zeros", "one chunk (at most 100000 lines)", "--chunk-size")
    assert not (tmp_path / "out").exists() and not (tmp_path / "m.skm").exists()


@pytest.mark.parametrize("command", ["train", "scale", "predict", "tune"])
def test_file_of_nul_bytes(command, files, tmp_path, capsys):
    # A file of zero bytes is one 'line' of its whole size: refused at its first byte,
    # whatever the budget.
    zeros = tmp_path / "zeros"
    zeros.write_bytes(bytes(2 * 2**20))
    argv = {"train": ["train", zeros, tmp_path / "m.skm"], "scale": ["scale", zeros],
            "predict": ["predict", zeros, files[2]], "tune": ["tune", zeros]}[command]
    status, out, err = _run(capsys, *argv)
    _assert_error(status, err, 1, "zeros", "byte 0 is a NUL byte")
    assert out == "" and not (tmp_path / "m.skm").exists()


def test_range_file_beyond_the_budget(files, tmp_path, capsys):
    range_file = tmp_path / "range"
    range_file.write_text("x\n-1 1\n1 0 1\n100000 0 1\n")
    status, _, err = _run(capsys, "scale", "--memory-budget", "1MB", "-r", range_file,
                          files[0])
    _assert_error(status, err, 1, "range", "line 4", "from 1 to 16384", "'100000'",
                  "--memory-budget 1 MiB")
    range_file.write_bytes(b"x\n-1 1\n" + b"1 0 1\n" * 400_000)
    status, _, err = _run(capsys, "scale", "--memory-budget", "1MB", "-r", range_file,
                          files[0])
    _assert_error(status, err, 1, "range", "more than 1 MiB")
    range_file.write_bytes(b"x\n-1 1\n1 0 \xff\n")
    status, _, err = _run(capsys, "scale", "-r", range_file, files[0])
    _assert_error(status, err, 1, "range", "not a range file")


def test_out_of_memory_is_one_line(files, tmp_path, monkeypatch, capsys):
    def allocate(*args, **kwargs):
        raise MemoryError("Unable to allocate 8.00 GiB for an array with shape (2147483648,)")

    monkeypatch.setattr(ReducedSVC, "fit", allocate)
    status, _, err = _run(capsys, "train", files[0], tmp_path / "m.skm")
    _assert_error(status, err, 1, "out of memory", "8.00 GiB", "--memory-budget")
    assert not (tmp_path / "m.skm").exists()


def test_scale_with_standard_output_closed(files, tmp_path):
    range_file = tmp_path / "range"
    result = subprocess.run(
        [sys.executable, "-m", "sparsekernel.cli", "scale", "-s", str(range_file),
         str(files[0])], capture_output=False, stderr=subprocess.PIPE, text=True,
        timeout=120, preexec_fn=lambda: os.close(1))
    assert result.returncode == 1
    assert result.stderr.startswith("sparsekernel: error: standard output is closed")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert not range_file.exists()


# --- the memory budget and the basis count --------------------------------------------------

def test_default_memory_budget_is_the_library_s(files, capsys):
    args = build_parser().parse_args(["train", str(files[0])])
    model, _ = make_estimator(args)
    assert parse_memory_budget(model.memory_budget) == DEFAULT_MEMORY_BUDGET
    status, out, _ = _run(capsys, "train", "--help")
    assert status == 0
    text = " ".join(out.split())
    assert f"default: the library's {format_bytes(DEFAULT_MEMORY_BUDGET)}" in text
    assert "1GB" not in text and "no model is saved" not in text  # -b 1 saves the model


@pytest.mark.parametrize("extra", [[], ["--verbose"]])
def test_summary_says_auto_chose_the_basis(extra, files, tmp_path, capsys):
    # Said once: by the summary, or with --verbose by the estimator as the fit starts.
    status, out, err = _run(capsys, "train", *extra, files[0], tmp_path / "m.skm")
    m = load(tmp_path / "m.skm").basis_.shape[0]
    assert status == 0
    assert out.count("chosen by --n-basis auto") + err.count("n_basis='auto' chose") == 1
    if extra:
        assert f"n_basis='auto' chose m={m} " in err and f", {m} basis functions, fit " in out
    else:
        assert f", {m} basis functions (chosen by --n-basis auto), fit " in out
    status, out, err = _run(capsys, "train", *extra, "--n-basis", "10", files[0],
                            tmp_path / "m.skm")
    assert ", 10 basis functions, fit " in out
    assert "--n-basis auto" not in out and "n_basis='auto'" not in err


def test_bytes_per_feature_covers_reduced_svc_on_wide_sparse_data(tmp_path):
    # What the per-feature limit is for: ReducedSVC's fit on a wide sparse file allocates
    # per-feature arrays, and the limit charges at least as much per feature.
    import tracemalloc

    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    n, d = 200, 400_000
    Xw = sp.csr_matrix((rng.random(n * 5), (np.repeat(np.arange(n), 5),
                                            rng.integers(0, d, n * 5))), shape=(n, d))
    y = np.where(rng.random(n) > 0.5, 1.0, -1.0)
    tracemalloc.start()
    try:
        ReducedSVC(n_basis=20, gamma=1.0, random_state=0).fit(Xw, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < d * BYTES_PER_FEATURE


# --- LIBSVM habits --------------------------------------------------------------------------

def test_predict_ignores_unseen_features(files, tmp_path, capsys):
    X_test = np.hstack([X[80:], np.zeros((40, 195))])
    X_test[0, 7], X_test[3, 199], X_test[5, 199] = 1.0, 2.0, 3.0  # indices 8 and 200
    test = tmp_path / "wide.svm"
    dump_svmlight_file(X_test, Y[80:], str(test), zero_based=False)
    status, out, err = _run(capsys, "predict", test, files[2], tmp_path / "out.txt")
    assert status == 0, err
    assert err.count("\n") == 1 and err.startswith("sparsekernel: note: 3 values were ignored")
    assert "feature index 8, 200" in err and "5 features" in err
    # svm-predict's RBF kernel counts them in ||x - sv||^2: no claim of the same predictions.
    assert "never saw" in err and "no weight or centre coordinate" in err
    assert "svm-predict" not in err
    expected = load(files[2]).predict(X[80:])
    assert (tmp_path / "out.txt").read_text().split() == [f"{v:g}" for v in expected]
    assert out.startswith("Accuracy = ")
    status, _, err = _run(capsys, "predict", "-q", test, files[2])
    assert (status, err) == (0, "")


def test_predict_names_a_libsvm_model_file(files, tmp_path, capsys):
    libsvm_model = tmp_path / "a9a.model"
    libsvm_model.write_text("svm_type c_svc\nkernel_type rbf\ngamma 0.0078125\nnr_class 2\n")
    status, _, err = _run(capsys, "predict", files[1], libsvm_model)
    _assert_error(status, err, 1, "a9a.model", "LIBSVM model file", "cannot read",
                  "sparsekernel train")


def test_predict_densifies_for_a_pipeline_that_centres(files, tmp_path, capsys):
    pipeline = make_pipeline(StandardScaler(), LowRankSVC(n_basis=10, random_state=0))
    pipeline.fit(X[:80], Y[:80])
    model_file = tmp_path / "pipe.skm"
    save(pipeline, model_file)
    status, out, err = _run(capsys, "predict", files[1], model_file, tmp_path / "out.txt")
    assert status == 0, err
    expected = pipeline.predict(load_svmlight_path(files[1], n_features=5)[0].toarray())
    assert (tmp_path / "out.txt").read_text().split() == [f"{v:g}" for v in expected]
    correct = int(np.sum(expected == Y[80:]))
    assert out == f"Accuracy = {100 * correct / 40:g}% ({correct}/40) (classification)\n"


def test_predict_pipeline_refuses_a_dense_matrix_beyond_the_budget(tmp_path, capsys):
    # 40 rows x 20,000 features as a dense matrix: 6.1 MiB, above a 1 MiB budget.
    rng = np.random.default_rng(0)
    X_wide = np.zeros((40, 20_000))
    X_wide[np.arange(40), rng.integers(0, 20_000, 40)] = 1.0
    X_wide[:, :2] = rng.normal(size=(40, 2))
    y = np.where(X_wide[:, 0] > 0, 1.0, -1.0)
    pipeline = make_pipeline(StandardScaler(), ReducedSVC(n_basis=5, random_state=0))
    model_file, test = tmp_path / "pipe.skm", tmp_path / "test.svm"
    save(pipeline.fit(X_wide, y), model_file)
    dump_svmlight_file(X_wide, y, str(test), zero_based=False)
    status, _, err = _run(capsys, "predict", "--memory-budget", "1MB", test, model_file,
                          tmp_path / "out.txt")
    _assert_error(status, err, 1, "StandardScaler", "dense input only", "6.1 MiB",
                  "--memory-budget 1 MiB")
    assert not (tmp_path / "out.txt").exists()


def test_tune_boundary_warning_in_the_command_line_s_terms(files, capsys):
    # A box of small C values: the best C lies on its upper edge.
    status, out, err = _run(capsys, "tune", "-q", "-v", "2", "--n-basis", "10",
                            "-log2c", "-10,-7", files[0])
    assert status == 0
    assert "Warning" not in err and ".py" not in err and "C_range" not in err
    (line,) = err.splitlines()
    assert re.fullmatch(r"sparsekernel: warning: the best C = 0\.0078125 \(log2 -7\) lies on "
                        r"the upper edge of the search box -log2c -10,-7; .* widen it, e.g. "
                        r"-log2c -10,-5\.5", line), line
    best, grid = out.splitlines()
    match = re.fullmatch(r"Best C = (\S+), gamma = (\S+), CV accuracy = (\S+)%", best)
    c, g, rate = grid.split()
    assert [f"{float(v):g}" for v in (c, g, rate)] == list(match.groups())
    assert float(c) == 2.0**-7


# --- standard input and streams as data files ----------------------------------------------

def _stdin(monkeypatch, data):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def _argv(command, data, files, tmp_path):
    return {"train": ["train", "--n-basis", "10", data, tmp_path / "m.skm"],
            "train-streamed": ["train", "--model", "lowrank", "--n-basis", "10", "--chunk-size",
                               "30", "--n-passes", "2", data, tmp_path / "m.skm"],
            "predict": ["predict", data, files[2], tmp_path / "out"],
            "scale": ["scale", data]}[command]


def _outputs(command, out, tmp_path):
    """What a command produced: its model's decision values, or what it wrote."""
    if command.startswith("train"):
        return out.split(": ")[0], load(tmp_path / "m.skm").decision_function(X).tolist()
    return out, (tmp_path / "out").read_text() if command == "predict" else None


@pytest.mark.parametrize("command", ["train", "train-streamed", "predict", "scale"])
def test_standard_input_and_pipes_read_as_the_file(command, files, tmp_path, monkeypatch,
                                                   capsys):
    # '-' is standard input, and a pipe (/dev/stdin under a shell's '|', a named pipe) is
    # copied once; the result is the regular file's, and no copy is left behind.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    source = files[1] if command == "predict" else files[0]
    status, out, err = _run(capsys, *_argv(command, source, files, tmp_path))
    assert status == 0, err
    expected = _outputs(command, out, tmp_path)
    _stdin(monkeypatch, source.read_bytes())
    status, out, err = _run(capsys, *_argv(command, "-", files, tmp_path))
    assert status == 0, err
    assert _outputs(command, out, tmp_path) == expected
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_bytes, args=(source.read_bytes(),), daemon=True)
    writer.start()
    status, out, err = _run(capsys, *_argv(command, fifo, files, tmp_path))
    writer.join(timeout=30)
    assert status == 0, err
    assert _outputs(command, out, tmp_path) == expected
    assert _entries(tmp_path / "tmp") == []


def test_standard_input_errors_name_it(files, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _stdin(monkeypatch, (GOOD.replace("1 1:0.2 2:0.1", "1 1:0.2 2:x")).encode())
    status, _, err = _run(capsys, "train", "-")
    _assert_error(status, err, 1, "Could not read '<stdin>'", "line 3")
    _stdin(monkeypatch, GOOD.encode() * 100)
    status, _, err = _run(capsys, "scale", "--memory-budget", "1KB", "-")
    _assert_error(status, err, 1, "'<stdin>': reading it into memory takes more than 1")
    _stdin(monkeypatch, GOOD.encode())
    status, out, err = _run(capsys, "train", "-")
    assert status == 0, err
    assert out.endswith("; saved to stdin.model\n") and (tmp_path / "stdin.model").exists()
    monkeypatch.setattr(sys, "stdin", None)
    status, _, err = _run(capsys, "scale", "-")
    _assert_error(status, err, 1, "standard input is closed")


def test_dev_stdin_reads_a_pipe_in_a_process(files, capsys):
    result = subprocess.run([sys.executable, "-m", "sparsekernel.cli", "scale", "/dev/stdin"],
                            input=files[0].read_bytes(), capture_output=True, timeout=120)
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout.decode() == _run(capsys, "scale", files[0])[1]


# --- standard output closed ----------------------------------------------------------------

@pytest.mark.parametrize("command", ["train", "predict", "tune", "demo"])
def test_standard_output_closed_is_an_error_before_the_work(command, files, tmp_path,
                                                            monkeypatch, capsys):
    def never(*args, **kwargs):
        raise AssertionError("the command started its work")

    argv = {"train": ["train", files[0], tmp_path / "m.skm"],
            "predict": ["predict", files[1], files[2], tmp_path / "out"],
            "tune": ["tune", files[0]], "demo": ["demo"]}[command]
    monkeypatch.setattr(train_module, "read_data", never)
    monkeypatch.setattr(predict_module, "read_data", never)
    monkeypatch.setattr(demo_module, "make_checkerboard", never)
    monkeypatch.setattr(sys, "stdout", None)
    status, _, err = _run(capsys, *argv)
    _assert_error(status, err, 1, "standard output is closed")
    assert not (tmp_path / "m.skm").exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["train", "predict"])
def test_standard_output_closed_with_q_completes(command, files, tmp_path, monkeypatch,
                                                 capsys):
    monkeypatch.setattr(sys, "stdout", None)
    target = tmp_path / "result"
    argv = (["train", "-q", files[0], target] if command == "train" else
            ["predict", "-q", files[1], files[2], target])
    status, _, err = _run(capsys, *argv)
    assert (status, err) == (0, "")
    assert target.stat().st_size > 0


# --- text Python reads otherwise than LIBSVM's tools ----------------------------------------

@pytest.mark.parametrize("block", [3, 2**20])  # 3 bytes: CR LF, comments across blocks
@pytest.mark.parametrize("command", ["train", "predict", "scale"])
@pytest.mark.parametrize("text, line, fragments", [
    ("1 1:0.5 2:1\n-1 1:0.25 2:1_000\n", 2, ["expected numbers", "without '_'",
                                               "got '2:1_000'"]),
    ("1 1:0.5 2:1\n1_0 1:0.25 2:1\n", 2, ["got '1_0'"]),
    ("1 1:0.5 2:1 # ok_1\n-1 1:0.25 2_1:1 #\n", 2, ["got '2_1:1'"]),
    ("1 1:0.5 2:1\r\n-1 1:0.25\r-1 2:0.3\r", 2, ["carriage return (CR) without a line feed",
                                                  "LF or CR LF", "got '-1 1:0.25\\r-"]),
    ("1 1:0.5 2:1\n-1 1:0.25 2:0.3\r", 2, ["carriage return", "got '-1 1:0.25 2:0.3\\r'"]),
])
def test_text_python_reads_otherwise_is_refused(text, line, fragments, command, block, files,
                                                tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(files_module, "_BLOCK", block)
    data = tmp_path / "d.svm"
    data.write_bytes(text.encode())
    argv = {"train": ["train", data, tmp_path / "m.skm"],
            "predict": ["predict", data, files[2], tmp_path / "out"],
            "scale": ["scale", data]}[command]
    status, out, err = _run(capsys, *argv)
    if block < len(text) and "_" in text:  # the field quoted is the block's part of it
        fragments = [f for f in fragments if not f.startswith("got")]
    _assert_error(status, err, 1, f"Could not read '{data}' as an SVMlight/LIBSVM file: line "
                  f"{line}: ", *fragments)
    assert out == "" and not {"m.skm", "out"} & set(_entries(tmp_path))


@pytest.mark.parametrize("block", [3, 2**20])
def test_comments_with_underscores_and_crlf_are_read(block, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(files_module, "_BLOCK", block)
    data = tmp_path / "d.svm"
    data.write_bytes(b"# head_er\r\n1 1:1 2:1 # a_b\r\n-1 1:2 2:3 #_\r\n")
    status, out, err = _run(capsys, "scale", data)
    assert (status, out, err) == (0, "1 1:-1 2:-1 \n-1 1:1 2:1 \n", "")


# --- scaled values beyond the float range ---------------------------------------------------

@pytest.mark.parametrize("range_text, data, fragments", [
    ("x\n-1 1\n1 0 1e-300\n", "1 1:0.5\n-1 1:1e10\n",
     ["line 2: feature 1 = 10000000000, mapped from [0, 1e-300] to [-1, 1], "
      "lies beyond the largest float"]),
    ("x\n-1e300 1e300\n1 1 1.0000000000000002\n2 0 1\n", "1 1:1 2:1\n-1 2:0.5\n",
     ["line 2: feature 1 = 0 (left out of the line)", "lies beyond the largest float"]),
    ("y\n0 1\n1 1\nx\n-1 1\n1 0 1\n", "1 1:0.5\n-1 1:1\n",
     ["line 2: the label -1, mapped from [1, 1] to [0, 1], has no image"]),
])
def test_scale_refuses_values_mapped_beyond_the_float_range(range_text, data, fragments,
                                                            tmp_path, capsys):
    # svm-scale maps a value outside a restored range linearly (no clipping) and prints inf
    # or nan where that leaves the floats; here it is an error naming the line.
    (tmp_path / "range").write_text(range_text)
    (tmp_path / "d.svm").write_text(data)
    status, out, err = _run(capsys, "scale", "-r", tmp_path / "range", tmp_path / "d.svm")
    _assert_error(status, err, 1, *fragments)
    assert out == ""
