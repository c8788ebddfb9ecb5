"""files_touched / is_file_tool: the file keys findings are matched on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.events import ToolCall
from ledger.watcher.paths import command_paths, files_touched, is_file_tool


@pytest.fixture()
def proj(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    (root / "data").mkdir()
    (root / "data" / "model.ckpt").write_bytes(b"\x00")
    (root / "Makefile").write_text("all:\n")
    (root / "build").mkdir()
    (root / "notes").write_text("no extension\n")
    return root.resolve()


def bash(command: str, cwd: Path | str) -> list[str]:
    return files_touched(ToolCall("Bash", {"command": command}), str(cwd))


# --------------------------------------------------------------------------- structured tools


@pytest.mark.parametrize("name, key", [
    ("Read", "file_path"), ("Edit", "file_path"), ("Write", "file_path"),
    ("MultiEdit", "file_path"), ("NotebookEdit", "notebook_path"),
])
def test_file_path_inputs(proj: Path, name: str, key: str) -> None:
    target = proj / "src" / "pkg" / "mod.py"
    assert files_touched(ToolCall(name, {key: str(target)}), "/") == [str(target)]


def test_relative_input_is_joined_to_cwd_and_normalised(proj: Path) -> None:
    tool = ToolCall("Read", {"file_path": "src/./pkg/../pkg/mod.py"})
    assert files_touched(tool, str(proj)) == [str(proj / "src/pkg/mod.py")]


def test_nonexistent_file_is_still_absolute_and_normalised(proj: Path) -> None:
    tool = ToolCall("Write", {"file_path": str(proj / "new" / ".." / "fresh.py")})
    assert files_touched(tool, "/") == [str(proj / "fresh.py")]


def test_symlinks_resolve_to_the_real_file(proj: Path) -> None:
    link = proj / "link.py"
    link.symlink_to(proj / "src" / "pkg" / "mod.py")
    assert files_touched(ToolCall("Read", {"file_path": str(link)}), "/") == [
        str(proj / "src" / "pkg" / "mod.py")]
    # A file that does not exist yet under a symlinked dir gets the same key as later.
    (proj / "lnk").symlink_to(proj / "src")
    assert files_touched(ToolCall("Write", {"file_path": str(proj / "lnk" / "x.py")}), "/") \
        == [str(proj / "src" / "x.py")]


def test_opencode_style_keys_and_lowercase_names(proj: Path) -> None:
    tool = ToolCall("read", {"filePath": "data/model.ckpt"})
    assert files_touched(tool, str(proj)) == [str(proj / "data" / "model.ckpt")]


def test_grep_path_and_concrete_glob(proj: Path) -> None:
    tool = ToolCall("Grep", {"pattern": "x = ", "path": "src/pkg", "glob": "mod.py"})
    assert files_touched(tool, str(proj)) == [str(proj / "src/pkg"), str(proj / "src/pkg/mod.py")]
    wild = ToolCall("Grep", {"pattern": "x", "path": "src", "glob": "*.py"})
    assert files_touched(wild, str(proj)) == [str(proj / "src")]
    # No path: the implicit whole-cwd search is not a file key.
    assert files_touched(ToolCall("Grep", {"pattern": "x", "output_mode": "content"}),
                         str(proj)) == []


def test_glob_pattern_only_when_concrete(proj: Path) -> None:
    assert files_touched(ToolCall("Glob", {"pattern": "lib/**/*.ex"}), str(proj)) == []
    assert files_touched(ToolCall("Glob", {"pattern": "Makefile"}), str(proj)) == [
        str(proj / "Makefile")]
    tool = ToolCall("Glob", {"pattern": "mod.py", "path": str(proj / "src/pkg")})
    assert files_touched(tool, "/") == [str(proj / "src/pkg"), str(proj / "src/pkg/mod.py")]


def test_non_file_tools_and_bad_inputs() -> None:
    assert files_touched(ToolCall("WebFetch", {"url": "https://x.y/a.json"}), "/w") == []
    assert files_touched(ToolCall("Task", {"prompt": "read src/a.py"}), "/w") == []
    assert files_touched(ToolCall("Read", {"file_path": 7}), "/w") == []
    assert files_touched(ToolCall("Read", "nope"), "/w") == []  # type: ignore[arg-type]
    assert files_touched(ToolCall("Bash", {"command": ["ls"]}), "/w") == []
    assert files_touched(ToolCall("Read", {"file_path": "/tmp/a\x00b"}), "/w") == ["/tmp/a\x00b"]
    assert not is_file_tool(None)  # type: ignore[arg-type]


def test_is_file_tool() -> None:
    for name in ("Bash", "Read", "Grep", "Glob", "Edit", "Write", "NotebookEdit", "MultiEdit",
                 "bash", "read"):
        assert is_file_tool(name)
    for name in ("Task", "Agent", "WebFetch", "WebSearch", "TodoWrite", "mcp__x__read", ""):
        assert not is_file_tool(name)


# --------------------------------------------------------------------------- bash


def test_bash_paths_with_slash_or_extension(proj: Path) -> None:
    assert bash("cat src/pkg/mod.py data/model.ckpt missing.json", proj) == [
        str(proj / "src/pkg/mod.py"), str(proj / "data/model.ckpt"), str(proj / "missing.json")]


def test_bash_bare_words_only_when_they_exist(proj: Path) -> None:
    assert bash("ls build notes nothing-here status", proj) == [
        str(proj / "build"), str(proj / "notes")]
    assert bash("make -f Makefile all", proj) == [str(proj / "Makefile")]


def test_bash_skips_flags_numbers_urls_assignments_and_globs(proj: Path) -> None:
    cmd = ("FOO=bar DEBUG=1 curl -sSL -o out/page.html --max-time 10 "
           "https://example.com/a/b.json http://localhost:4000/api git@github.com:o/r.git "
           "localhost:8080/x *.py src/**/x.py $HOME/a.py `pwd`/b.py")
    assert bash(cmd, proj) == [str(proj / "out/page.html")]


def test_bash_option_values(proj: Path) -> None:
    assert bash("tool --config=conf/app.toml --level=debug -x", proj) == [
        str(proj / "conf/app.toml")]


def test_bash_cd_changes_base_for_later_parts(proj: Path) -> None:
    assert bash("cd src/pkg && cat mod.py; cd .. && ls pkg/mod.py", proj) == [
        str(proj / "src/pkg/mod.py")]
    assert bash(f"cd {proj}/data\nhead -c 8 model.ckpt", "/") == [str(proj / "data/model.ckpt")]
    assert bash("cd - && cat a.py", proj) == [str(proj / "a.py")]
    assert bash("cd $DIR && cat a.py", proj) == [str(proj / "a.py")]


def test_bash_pipes_and_operators_split_commands(proj: Path) -> None:
    assert bash("grep -rn TODO src/ | sort | uniq -c > report.txt 2>&1", proj) == [
        str(proj / "src"), str(proj / "report.txt")]
    assert bash("test -f a.py||touch b.py&&ls c.py", proj) == [
        str(proj / "a.py"), str(proj / "b.py"), str(proj / "c.py")]


def test_bash_redirections(proj: Path) -> None:
    assert bash("python gen.py > out/data.csv 2>/dev/null < in.txt", proj) == [
        str(proj / "gen.py"), str(proj / "out/data.csv"), str(proj / "in.txt")]
    assert bash("cmd &> all.log", proj) == [str(proj / "all.log")]
    assert bash("cmd 2>&1 >&2", proj) == []


def test_bash_heredoc_body_is_not_parsed(proj: Path) -> None:
    cmd = "cat > conf/x.yaml <<'EOF'\nkey: other/file.py\npath: /etc/passwd\nEOF\ncat y.py"
    assert bash(cmd, proj) == [str(proj / "conf/x.yaml"), str(proj / "y.py")]


def test_bash_commit_message_heredoc_in_quotes(proj: Path) -> None:
    cmd = ('git add lib/a.ex && git commit -m "$(cat <<\'EOF\'\nfeat: touch lib/b.ex\n'
           "\nCo-Authored-By: x\nEOF\n)\"")
    assert bash(cmd, proj) == [str(proj / "lib/a.ex")]


def test_bash_pattern_arguments_are_not_files(proj: Path) -> None:
    assert bash('grep -r "a/b" src/ 2>/dev/null', proj) == [str(proj / "src")]
    assert bash("grep -A 3 foo/bar lib/x.ex", proj) == [str(proj / "lib/x.ex")]
    assert bash("grep -e foo/bar -e baz lib/y.ex", proj) == [str(proj / "lib/y.ex")]
    assert bash("rg -g '*.py' 'import os/' src", proj) == [str(proj / "src")]
    assert bash("sed -i 's/a\\/b/c/g' x.py", proj) == [str(proj / "x.py")]
    assert bash("sed -i '' -e 's|x|y|' z.cfg", proj) == [str(proj / "z.cfg")]
    assert bash("awk -F: '{print $1}' /etc/hosts", proj) == ["/etc/hosts"]
    assert bash("jq .a/b data.json", proj) == [str(proj / "data.json")]
    assert bash("grep -f pats.txt src/a.py", proj) == [
        str(proj / "pats.txt"), str(proj / "src/a.py")]


def test_bash_echo_text_is_not_files(proj: Path) -> None:
    assert bash('echo "see src/a.py" ; printf "%s\\n" b/c.py', proj) == []
    assert bash("echo done > status/flag.txt", proj) == [str(proj / "status/flag.txt")]


def test_bash_test_ids_and_line_suffixes(proj: Path) -> None:
    assert bash("pytest tests/test_a.py::TestX::test_y src/b.py:12 c.py:3:4", proj) == [
        str(proj / "tests/test_a.py"), str(proj / "src/b.py"), str(proj / "c.py")]


def test_bash_home_and_absolute_paths(proj: Path) -> None:
    assert bash("cat ~/notes.md /etc/hosts", proj) == [
        os.path.realpath(os.path.expanduser("~/notes.md")), "/etc/hosts"]


def test_bash_script_command_word(proj: Path) -> None:
    assert bash("./scripts/run.sh --fast && python3 -m pytest", proj) == [
        str(proj / "scripts/run.sh")]
    # An interpreter's path is not a file the agent works on.
    assert bash(".venv/bin/python -c pass", proj) == []


def test_bash_dash_c_script(proj: Path) -> None:
    assert bash("bash -c 'cd src && cat pkg/mod.py'", proj) == [str(proj / "src/pkg/mod.py")]


def test_inline_programs_name_their_files(proj: Path) -> None:
    """`python -c`, `node -e` and the like: the files a one-line program opens are its
    string literals (README: facts about a binary file reach the agent through commands
    such as `python -c ...` on it)."""
    ckpt = str(proj / "data/model.ckpt")
    assert bash("""python -c "import torch; torch.load('data/model.ckpt')" """, proj) == [ckpt]
    assert bash("python3.11 -c 'import pickle; pickle.load(open(\"data/model.ckpt\", \"rb\"))'", proj) == [ckpt]
    assert bash("""node -e "require('fs').readFileSync('src/pkg/mod.py')" """, proj) == [str(proj / "src/pkg/mod.py")]
    assert bash("""ruby -e 'puts File.size("Makefile")'""", proj) == [str(proj / "Makefile")]
    assert bash("""perl -E 'open my $f, "<", "notes"; print <$f>'""", proj) == [str(proj / "notes")]
    # A file the program creates has a known type: keyed before it exists.
    assert bash("""python -c "open('out/report.json', 'w').write('{}')" """, proj) == [str(proj / "out/report.json")]
    # Literals that are text, not files: no key (content types, encodings, modes, words).
    assert bash("""python -c "print('application/json', 'utf-8', 'rb', 'hello world')" """, proj) == []
    assert bash("python -c pass", proj) == []
    # Arguments after the program are its argv, read as usual.
    assert bash("""python -c "import sys; print(open(sys.argv[1]).read())" src/pkg/mod.py""", proj) == [
        str(proj / "src/pkg/mod.py")]
    # Inside bash -c, too.
    assert bash("""bash -c "python3 -c 'open(\\"data/model.ckpt\\")'" """, proj) == [ckpt]


def test_bash_comments(proj: Path) -> None:
    assert bash("# look at a/b.py\ncat c.py # and d.py\nls e.py", proj) == [
        str(proj / "c.py"), str(proj / "e.py")]
    assert bash('grep "#include" f.c', proj) == [str(proj / "f.c")]


def test_bash_quoted_paths_with_spaces_need_to_exist(proj: Path) -> None:
    (proj / "my file.txt").write_text("x")
    assert bash('cat "my file.txt" "not there.txt"', proj) == [str(proj / "my file.txt")]


def test_bash_unbalanced_quotes_fall_back(proj: Path) -> None:
    assert bash("cat src/pkg/mod.py 'unterminated", proj) == [str(proj / "src/pkg/mod.py")]
    assert bash('grep "oops src/x.py', proj) == [str(proj / "src/x.py")]
    bash("echo \\", proj)  # trailing escape: no error


def test_bash_dedupes_and_keeps_order(proj: Path) -> None:
    assert bash("cat b.py a.py b.py ./a.py src/../b.py", proj) == [
        str(proj / "b.py"), str(proj / "a.py")]


def test_command_paths_direct(proj: Path) -> None:
    assert command_paths("cat x.py", str(proj)) == [str(proj / "x.py")]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("ab./-_ ~$*'\"\\|&;<>()#=:\n\t01")
                                + ["cd ", "grep ", "sed ", "<<EOF\n", "EOF", ".py",
                                   "bash -c ", "2>&1", "echo "]),
                max_size=40).map("".join) | st.text(max_size=60))
def test_bash_never_raises(command: str) -> None:
    for p in files_touched(ToolCall("Bash", {"command": command}), "/w"):
        assert os.path.isabs(p)
