"""`tracesight mcp` driven by the official MCP Python SDK's stdio client (the `mcp` package
from PyPI, installed by scripts/test-python.sh when it can be): the session a coding agent
would open. Skips, saying why, where the package is absent."""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
CLI = os.environ.get("TRACESIGHT_BIN", str(ROOT / "target" / "release" / "tracesight"))


def test_the_official_client_initializes_lists_and_calls_analyze():
    pytest.importorskip("mcp", reason="the `mcp` package could not be installed (PyPI unreachable?)")
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    if not os.access(CLI, os.X_OK):
        pytest.fail(f"no CLI at {CLI}: build it (cargo build --release) or set TRACESIGHT_BIN")
    want = json.loads(
        subprocess.run([CLI, "--json", "--top", "3", "current_schema.json"], cwd=FIXTURES, capture_output=True,
                       text=True, check=True).stdout
    )

    async def session():
        params = StdioServerParameters(command=CLI, args=["mcp"], cwd=str(FIXTURES))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                init = await s.initialize()
                assert init.serverInfo.name == "tracesight"
                tools = {t.name: t for t in (await s.list_tools()).tools}
                assert {"analyze", "diff", "top_kernels", "hints"} <= set(tools)
                assert tools["analyze"].inputSchema["required"] == ["paths"]
                # The SDK checks each structured result against the tool's outputSchema.
                assert all(t.outputSchema and t.outputSchema["type"] == "object" for t in tools.values())
                b = await s.call_tool("buckets", {"paths": ["current_schema.json"],
                                                  "rules": "my custom kernel => elementwise"})
                assert not b.isError
                assert "other" not in {x["id"] for x in b.structuredContent["traces"][0]["buckets"]}
                r = await s.call_tool("analyze", {"paths": ["current_schema.json"], "top": 3})
                assert not r.isError
                assert r.structuredContent == want
                assert "current_schema.json" in r.content[0].text
                missing = await s.call_tool("analyze", {"paths": ["absent.json"]})
                assert missing.isError and "absent.json" in missing.content[0].text
                d = await s.call_tool("diff", {"before": "current_schema.json", "after": "math_sdpa.json"})
                assert not d.isError and d.structuredContent["diff"]["verdict"] in d.content[0].text
                return init.protocolVersion

    version = anyio.run(session)
    from mcp.types import LATEST_PROTOCOL_VERSION

    # The SDK asks for its newest revision; the server answers with it when it knows it.
    assert version == LATEST_PROTOCOL_VERSION or LATEST_PROTOCOL_VERSION not in (
        "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
