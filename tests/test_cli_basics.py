def test_help_lists_commands(shoectl) -> None:
    result = shoectl("--help")
    assert result.returncode == 0
    assert "Commands" in result.stdout


def test_unknown_command_is_one_line_exit_2(shoectl) -> None:
    result = shoectl("no-such-command")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr
    assert "no-such-command" in result.stderr
