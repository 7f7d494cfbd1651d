"""The persistent shell: state survives between commands, failures are contained."""

from __future__ import annotations

import pytest

from rollbox.sandbox import BwrapConfig, LocalConfig, make_sandbox
from rollbox.sandbox.shell import ShellSession


@pytest.mark.parametrize("config", [BwrapConfig(), LocalConfig()], ids=["bwrap", "local"])
async def test_shell_session_behaves_like_a_terminal(config: BwrapConfig | LocalConfig) -> None:
    async with await make_sandbox(config) as sb:
        sh = ShellSession(sb, output_cap=300)
        r = await sh.run("mkdir -p sub && cd sub && export FOO=bar && echo made")
        assert (r.exit_code, r.output, r.cwd) == (0, "made\n", f"{sb.workdir}/sub")
        r = await sh.run("echo $FOO; pwd; echo to-stderr >&2; false")
        assert r.exit_code == 1 and r.output == f"bar\n{sb.workdir}/sub\nto-stderr\n"
        r = await sh.run("echo 'unbalanced")
        assert r.exit_code == 2 and "unexpected EOF" in r.output
        assert (await sh.run("echo $FOO")).output == "bar\n", "a syntax error kills nothing"
        r = await sh.run("printf 'no newline'")
        assert r.output == "no newline"
        r = await sh.run("cat")  # commands cannot read the session's own input
        assert r.exit_code == 0 and r.output == ""
        r = await sh.run("yes | head -c 10000; echo THE-END")
        assert r.truncated and r.output.startswith("y\ny\n") and r.output.endswith("THE-END\n")
        assert "\n[... 9708 bytes of output cut here ...]\n" in r.output  # 10008 - 2 * 150 kept
        r = await sh.run("sleep 30", timeout_s=0.5)
        assert r.timed_out and r.exit_code is None and "restarted" in r.output
        r = await sh.run("pwd; echo ${FOO:-unset}")
        assert r.restarted and r.output == f"{sb.workdir}/sub\nunset\n", "cwd kept, env reset"
        r = await sh.run("exit 7")
        assert r.exit_code == 7 and "exited" in r.output
        r = await sh.run("echo back")
        assert r.restarted and r.output == "back\n"
        await sh.close()
