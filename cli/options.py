"""Typer option definitions shared by every command group.

Every command declares ``json_output: JsonOption = False``. The option's callback records
the flag on the invocation's App while the command line is parsed, i.e. before the command
body runs, so that an error raised by the body is rendered as JSON as well. Commands read the
flag through ``App.of(ctx).json`` (``App.emit`` does it for them); tests/test_cli_help.py
fails when a command lacks the option.

The verbs that ask for confirmation declare ``force: ForceOption = False``, or
``Annotated[bool, force_option("Remove")]`` for their own help text; the verbs that read a
configuration file ``Annotated[Path | None, config_option(HELP)]``. The stream and consumer
verbs name their stream with ``StreamArg``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from jetlink.cli import completion
from jetlink.cli.app import (
    ENV_REST_API_KEY,
    ENV_REST_API_SECRET,
    ENV_REST_TOKEN,
    ENV_REST_URL,
    App,
)


class DurationRefused(typer.BadParameter):
    """A duration option's bad value, in jetlink's words (``invalid value for --ttl: '5':
    missing unit, e.g. 5s``) where click would say "Invalid value for '--ttl'"; a usage
    error (exit 2) like any command line click refuses. Click names the option that was
    being parsed (it sets ``param`` on the way out of the parser), so the message is made
    when it is shown."""

    def __init__(self, value: str, why: str) -> None:
        super().__init__(why)
        self.value = value
        self.why = why

    def format_message(self) -> str:
        from jetlink.core.errors import clip

        param = self.param
        flag = max(param.opts, key=len) if param is not None and param.opts else "duration"
        return f"invalid value for {flag}: {clip(self.value)!r}: {self.why}"


class DurationType:
    """The type of every option that takes a duration (``--max-age``, ``--timeout``,
    ``--seen-critical`` ...): natscli's rule, core.durations ``read_duration`` (a unit is
    required: a bare number other than 0 is refused with "missing unit, e.g. 5s"), applied
    while the command line is parsed, so a bad value is a usage error (exit 2) before
    anything runs, on either engine. The command gets the text as typed and reads it with
    the same rule (cli/stream_flags.py ``parse_duration_flag``) or stores it (a context's
    timeout). ``unlimited``: -1 means unlimited; ``wait``: a pause the command sleeps
    through (at most 100 years); ``timeout``: the server timeout (core/live/settings.py
    ``parse_timeout``: more than 0, at most 1h). An option takes it as its ``parser`` (Typer's
    public way to a parameter type of one's own). tests/test_durations_cli.py walks the
    command tree: every option that looks like a duration must have this type."""

    __name__ = "duration"  # the parameter type's name (Typer's FuncParamType reads it)

    def __init__(self, *, unlimited: bool = False, wait: bool = False,
                 timeout: bool = False, minimum: int = 0, maximum: int | None = None,
                 java: bool = False, fisk: bool = False) -> None:
        self.unlimited = unlimited
        self.wait = wait
        self.timeout = timeout
        self.java = java  # java.time.Duration's PnDTnHnMnS too (what Kafka's tools take)
        # natscli's flag library's own reading (core.durations ``parse_fisk_duration``:
        # text between the parts skipped, a sign allowed): server check's thresholds
        self.fisk = fisk
        # nanoseconds, as ``maximum`` (None: the rule's own limit); fisk's: any sign
        self.minimum = -(2**63 - 1) if fisk else minimum
        self.maximum = maximum

    def __call__(self, value: Any) -> str:
        from jetlink.core.durations import (
            DurationError,
            format_duration,
            parse_java_duration,
        )
        from jetlink.core.live.settings import timeout_seconds

        text = str(value).strip()
        if self.java and parse_java_duration(text) is not None:
            return text
        try:
            if self.timeout:
                timeout_seconds(text)
                return text
            ns = self.ns(text)
        except DurationError as exc:
            reason = exc.reason
            if self.java and reason.startswith("expected"):  # (the forms it takes: both)
                reason = (f"{reason}, or java.time.Duration's PnDTnHnMnS as Kafka's tools "
                          "read it, e.g. PT1H, P1DT2H, PT0.5S, -PT1H")
            raise DurationRefused(text, reason) from None
        if ns < self.minimum or (self.maximum is not None and ns > self.maximum):
            top = f" and at most {format_duration(self.maximum)}" if self.maximum else ""
            raise DurationRefused(text, f"must be at least {format_duration(self.minimum)}{top}")
        return text

    def ns(self, text: str) -> int:
        """The nanoseconds of ``text``, a value this type has accepted (exact)."""
        from jetlink.core.durations import (
            parse_fisk_duration,
            parse_java_duration,
            read_duration,
        )

        if self.fisk:
            return parse_fisk_duration(text)
        ns = parse_java_duration(text) if self.java else None
        if ns is None:
            ns = read_duration(text, unlimited=self.unlimited, wait=self.wait)
        return ns

    def seconds(self, text: str) -> float:
        """The seconds of ``text``, a value this type has accepted."""
        return self.ns(text) / 1e9


class SizeType:
    """The type of an option that takes a size (``--max-bytes``, ``--max-value-size`` ...):
    natscli's ParseStringAsBytes (core.numbers ``parse_byte_size``) applied while the
    command line is parsed, as a duration's, so a bad value is a usage error before anything
    runs (a prompt, a connection). The command gets the text as typed and reads it with the
    same rule (cli/stream_flags.py ``parse_size``)."""

    __name__ = "size"  # the parameter type's name (Typer's FuncParamType reads it)

    def __init__(self, bits: int = 64) -> None:
        self.bits = bits

    def __call__(self, value: Any) -> str:
        from jetlink.core.numbers import parse_byte_size

        text = str(value)
        try:
            parse_byte_size(text, self.bits)
        except ValueError as exc:  # (said as a duration's: "invalid value for --flag: ...")
            raise DurationRefused(text.strip(), str(exc)) from None
        return text


SIZE, SIZE32 = SizeType(), SizeType(bits=32)  # an int64 size, an int32 one (max_msg_size)
DURATION = DurationType()
JAVA_DURATION = DurationType(java=True)  # Kafka's tools' durations (--by-duration)
WAIT = DurationType(wait=True)
UNLIMITED_DURATION = DurationType(unlimited=True)
TIMEOUT = DurationType(timeout=True)
CHECK_DURATION = DurationType(fisk=True)  # server check's thresholds, read as natscli's


def _record_json(ctx: typer.Context, value: bool) -> bool:
    if value:
        App.of(ctx).json = True
    return value


TranslateOption = Annotated[
    str | None,
    typer.Option(
        "--translate", metavar="CMD", show_default=False,
        help="Print each body through the command CMD (natscli's: the body on its standard "
        "input; {{ Subject }} and {{ Stream }} in CMD).",
    ),
]

# natscli's --no-select (fail rather than pick from a list when no name is given): jetlink
# never picks from a list, so it changes nothing; accepted so natscli's scripts run as they are
NoSelectOption = Annotated[
    bool,
    typer.Option("--no-select", help="Accepted for natscli's scripts: a name is always required."),
]

JsonOption = Annotated[
    bool,
    typer.Option(
        "--json",
        "-j",
        help="Print exactly one JSON document on stdout (errors too) instead of tables.",
        callback=_record_json,
        show_default=False,
    ),
]
# The commands that follow a feed (sub, kv watch): one document per line as each comes.
JsonLinesOption = Annotated[
    bool,
    typer.Option(
        "--json",
        "-j",
        help="Print JSON lines on stdout, one compact document per line as each comes (an "
        "error: one document).",
        callback=_record_json,
        show_default=False,
    ),
]


def validate_config_option(rules: str) -> Any:
    """natscli's ``add --validate``: the configuration checked with the server's ``rules``,
    printed, nothing created (cli/common.py ``checked_config_out``)."""
    return typer.Option("--validate", help=f"Only check the configuration (the server's rules "
                        f"{rules}); print it, create nothing.")


def output_config_option(what: str) -> Any:
    """natscli's ``add --output FILE``: the checked configuration saved instead of creating
    the ``what``."""
    return typer.Option("--output", metavar="FILE", dir_okay=False, show_default=False,
                        help=f"Save the configuration (checked) to FILE instead of creating "
                        f"the {what}.")


def force_option(verb: str = "Act") -> Any:
    """``-f/--force`` of a verb that asks for confirmation (cli/output.py ``confirm``), its
    help ``<verb> without asking for confirmation.``"""
    return typer.Option("--force", "-f", help=f"{verb} without asking for confirmation.")


ForceOption = Annotated[bool, force_option()]


def config_option(help: str) -> Any:
    """``--config FILE``: an existing file holding a JSON configuration (read with
    cli/common.py ``read_json_file``)."""
    return typer.Option(
        "--config", metavar="FILE", exists=True, dir_okay=False, help=help, show_default=False
    )


StreamArg = Annotated[
    str, typer.Argument(metavar="STREAM", help="Stream name.", show_default=False,
                        autocompletion=completion.streams)
]


# -- --rest-url: the links / mirrors groups drive a REST API v3 endpoint -------------------

RestUrlOption = Annotated[
    str | None,
    typer.Option(
        "--rest-url",
        envvar=ENV_REST_URL,
        metavar="URL",
        help="Call this Confluent REST API v3 endpoint (jetlink serve, Confluent Server "
        "or Cloud) instead of the local engine; the cluster ID is --cluster. Default: "
        "the context's rest_url.",
        show_default=False,
    ),
]
RestTokenOption = Annotated[
    str | None,
    typer.Option(
        "--rest-token",
        envvar=ENV_REST_TOKEN,
        metavar="TOKEN",
        help="Bearer token sent to the REST API (Authorization: Bearer TOKEN).",
        show_default=False,
    ),
]
RestApiKeyOption = Annotated[
    str | None,
    typer.Option(
        "--rest-api-key",
        envvar=ENV_REST_API_KEY,
        metavar="KEY",
        help="API key for HTTP Basic authentication (with --rest-api-secret), as "
        "Confluent Cloud takes it.",
        show_default=False,
    ),
]
RestApiSecretOption = Annotated[
    str | None,
    typer.Option(
        "--rest-api-secret",
        envvar=ENV_REST_API_SECRET,
        metavar="SECRET",
        help="The API key's secret.",
        show_default=False,
    ),
]
InsecureOption = Annotated[
    bool,
    typer.Option(
        "--insecure",
        help="Do not verify the REST API's TLS certificate (verified by default).",
    ),
]


def rest_callback(
    ctx: typer.Context,
    rest_url: RestUrlOption = None,
    rest_token: RestTokenOption = None,
    rest_api_key: RestApiKeyOption = None,
    rest_api_secret: RestApiSecretOption = None,
    insecure: InsecureOption = False,
) -> None:
    """The options of the links / mirrors groups, recorded for :func:`jetlink.cli.common.
    rest_settings` (which adds the context's rest_url); nothing is read or checked here, so
    a verb's --help always works."""
    from jetlink.cli.common import REST_KEY, RestSettings, refuse_empty_target

    if not ctx.resilient_parsing:
        refuse_empty_target(ctx, "rest_url", rest_url, "--rest-url", "the REST API's URL")
    # (compared by name: Typer carries its own copy of Click and of its ParameterSource)
    source = getattr(ctx.get_parameter_source("rest_url"), "name", "")
    ctx.meta[REST_KEY] = RestSettings(
        url=rest_url or None,
        token=rest_token or None,
        api_key=rest_api_key or None,
        api_secret=rest_api_secret or None,
        insecure=insecure,
        url_from=ENV_REST_URL if rest_url and source == "ENVIRONMENT" else None,
    )


def dir_path(value: str | None, flag: str) -> Path | None:
    """A directory option's text as a path (``~`` expanded): an empty or blank one is a usage
    error naming the flag (it would mean the working directory, or a directory named by
    spaces, never what was meant)."""
    if value is None:
        return None
    if not value.strip():
        from jetlink.core.errors import UsageError

        raise UsageError(f"invalid value for {flag}: {value!r} is an empty path (give a "
                         "directory, e.g. ./data)", field=flag.lstrip("-").replace("-", "_"))
    return Path(value).expanduser()


# the options of both step-downs of a RAFT group (stream and consumer cluster), natscli's
PreferredOpt = Annotated[str | None, typer.Option(
    "--preferred", metavar="SERVER", show_default=False,
    help="Prefer placing the leader on this server (nats-server 2.11+).")]
StepDownForceOpt = Annotated[bool, typer.Option(
    "--force", "-f", help="Step down whatever the current leader (also none).")]
