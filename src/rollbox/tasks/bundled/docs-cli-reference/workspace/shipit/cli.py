"""Command-line interface of shipit."""
import argparse

REGIONS = ("eu-west-1", "us-east-1", "ap-south-1")
DEFAULT_REGION = REGIONS[0]
STRATEGIES = ["rolling", "blue-green", "canary"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="shipit", description="Deploy container images to the fleet.")
    parser.add_argument("-v", "--verbose", action="count", help="more log output (repeatable)")
    parser.add_argument("--config", metavar="PATH", default="~/.shipit.toml", help="configuration file")
    parser.add_argument("--region", choices=REGIONS, default=DEFAULT_REGION, help="target region")

    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    deploy = sub.add_parser("deploy", aliases=["up"], help="roll out an image")
    deploy.add_argument("service", help="service to deploy")
    deploy.add_argument("image", nargs="?", help="image reference (default: latest build)")
    deploy.add_argument("--replicas", type=int, default=2, help="number of instances")
    deploy.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    deploy.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for health")
    deploy.add_argument("-e", "--env", dest="environment", action="append", metavar="KEY=VALUE",
                        help="set an environment variable (repeatable)")
    deploy.add_argument("--strategy", choices=STRATEGIES, default="rolling", help="rollout strategy")

    rollback = sub.add_parser("rollback", help="return to an earlier release")
    rollback.add_argument("service")
    rollback.add_argument("--to", dest="revision", type=int, help="revision (default: the previous one)")
    rollback.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")

    status = sub.add_parser("status", aliases=["st", "ls"], help="show what is running")
    status.add_argument("services", nargs="*", help="services to show (default: all)")
    status.add_argument("--watch", action="store_true", help="refresh every 2 seconds")
    status.add_argument("--format", choices=["table", "json"], default="table", help="output format")

    logs = sub.add_parser("logs", help="stream service logs")
    logs.add_argument("service", help="service whose logs to show")
    logs.add_argument("--since", required=True, help="how far back, e.g. 10m")
    logs.add_argument("--no-follow", dest="follow", action="store_false", help="print and exit")
    logs.add_argument("-n", "--lines", type=int, default=100, help="lines of history")
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    print(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
