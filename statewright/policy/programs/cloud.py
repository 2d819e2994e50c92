"""Container, cluster, cloud and forge clients: the subcommands that run code (`docker run`,
`kubectl exec`, `gh extension`) and the ones that print resolved credentials (`aws configure
export-credentials`, `gh auth token`, `kubectl config view --raw`)."""

from __future__ import annotations

from .spec import CODE, SECRETS, Example, Program

_IN = "runs a command in a container"
DOCKER = Program(
    ("docker", "podman"), "the container engines",
    value_options=frozenset({"-H", "--host", "--context", "-c", "--config", "-l",
                             "--log-level"}),
    code_options={"-H": "talks to another engine", "--host": "talks to another engine"},
    subcommands=(("run", CODE, f"`docker run` {_IN} (host directories can be mounted)"),
                 ("exec", CODE, f"`docker exec` {_IN}"),
                 ("create", CODE, "`docker create` prepares a container to run"),
                 ("start", CODE, "`docker start` starts a container"),
                 ("build", CODE, "`docker build` runs the Dockerfile's commands"),
                 ("buildx", CODE, "`docker buildx` runs the Dockerfile's commands"),
                 ("cp", CODE, "`docker cp` writes files on the host"),
                 ("compose", CODE, "`docker compose` runs containers"),
                 ("container run", CODE, f"`docker container run` {_IN}"),
                 ("container exec", CODE, f"`docker container exec` {_IN}"),
                 ("plugin", CODE, "`docker plugin` installs code"),
                 ("login", SECRETS, "`docker login` handles stored credentials")),
    examples=(
        Example("docker run -v /:/host alpine sh", runs_code=True),
        Example("docker exec -it app sh", runs_code=True),
        Example("docker --context prod compose up", runs_code=True),
        Example("docker ps"),
        Example("docker logs app"),
        Example("docker images"),
    ),
)

_POD = "runs a command in the cluster"
KUBECTL = Program(
    ("kubectl", "oc"), "the Kubernetes clients",
    value_options=frozenset({"-n", "--namespace", "--context", "--cluster", "--user", "-s",
                             "--server", "-l", "--selector", "-o", "--output", "-c",
                             "--container"}),
    code_options={"--kubeconfig": "reads a kubeconfig whose credential plugin (`exec`) runs a "
                  "command here", "--token": "acts with another token"},
    subcommands=(("exec", CODE, f"`kubectl exec` {_POD}"),
                 ("run", CODE, f"`kubectl run` {_POD}"),
                 ("debug", CODE, f"`kubectl debug` {_POD}"),
                 ("attach", CODE, "`kubectl attach` attaches to a running process"),
                 ("cp", CODE, "`kubectl cp` writes files here or in the cluster"),
                 ("plugin", CODE, "`kubectl plugin` runs plugins"),
                 ("config view --raw", SECRETS, "`kubectl config view --raw` prints client "
                  "keys and tokens"),
                 ("config view --flatten", SECRETS, "`kubectl config view --flatten` prints "
                  "client keys and tokens"),
                 ("create token", SECRETS, "`kubectl create token` prints a new token"),
                 ("get secret", SECRETS, "`kubectl get secret` prints secrets"),
                 ("get secrets", SECRETS, "`kubectl get secrets` prints secrets")),
    examples=(
        Example("kubectl exec -it pod -- sh", runs_code=True),
        Example("kubectl -n prod run x --image=alpine -- id", runs_code=True),
        Example("kubectl config view --raw", secrets=True),
        Example("kubectl get secret db -o yaml", secrets=True),
        Example("kubectl --kubeconfig ./k.yaml get pods", runs_code=True),
        Example("kubectl get pods -n prod"),
        Example("kubectl logs deploy/app"),
        Example("kubectl config view"),
    ),
)

AWS = Program(
    ("aws",), "the AWS command line",
    value_options=frozenset({"--profile", "--region", "--output", "--endpoint-url",
                             "--query"}),
    subcommands=(("configure export-credentials", SECRETS, "`aws configure "
                  "export-credentials` prints the resolved credentials"),
                 ("configure get", SECRETS, "`aws configure get` prints configured values "
                  "(secret keys)"),
                 ("configure set", CODE, "`aws configure set` writes AWS configuration "
                  "(credential_process runs a command)"),
                 ("sts get-session-token", SECRETS, "prints new credentials"),
                 ("sts assume-role", SECRETS, "prints new credentials"),
                 ("sts get-federation-token", SECRETS, "prints new credentials"),
                 ("ecr get-login-password", SECRETS, "prints a registry password"),
                 ("codeartifact get-authorization-token", SECRETS, "prints a token"),
                 ("eks get-token", SECRETS, "prints a cluster token"),
                 ("secretsmanager get-secret-value", SECRETS, "prints a secret"),
                 ("ssm get-parameter", SECRETS, "prints a parameter (secrets included)"),
                 ("ssm get-parameters", SECRETS, "prints parameters (secrets included)"),
                 ("ssm start-session", CODE, "opens a shell on a remote machine"),
                 ("ecs execute-command", CODE, "runs a command in a container")),
    examples=(
        Example("aws configure export-credentials", secrets=True),
        Example("aws --profile prod configure get aws_secret_access_key", secrets=True),
        Example("aws ecr get-login-password --region eu-west-1", secrets=True),
        Example("aws s3 ls"),
        Example("aws sts get-caller-identity"),
        Example("aws configure list"),
    ),
)

GH = Program(
    ("gh",), "the GitHub command line",
    value_options=frozenset({"-R", "--repo", "--hostname"}),
    subcommands=(("auth token", SECRETS, "`gh auth token` prints the access token"),
                 ("auth status --show-token", SECRETS, "prints the access token"),
                 ("auth status -t", SECRETS, "prints the access token"),
                 ("extension", CODE, "`gh extension` installs or runs extensions"),
                 ("ext", CODE, "`gh extension` installs or runs extensions"),
                 ("alias set", CODE, "`gh alias set` defines a command (`--shell`)"),
                 ("config set", CODE, "`gh config set` sets the pager, editor or browser "
                  "(commands)"),
                 ("codespace ssh", CODE, "opens a shell on a codespace"),
                 ("cs ssh", CODE, "opens a shell on a codespace")),
    examples=(
        Example("gh auth token", secrets=True),
        Example("gh auth status --show-token", secrets=True),
        Example("gh extension install owner/gh-x", runs_code=True),
        Example("gh config set pager 'sh -c id'", runs_code=True),
        Example("gh pr list"),
        Example("gh auth status"),
        Example("gh issue view 10"),
    ),
)

CLOUD = (DOCKER, KUBECTL, AWS, GH)
