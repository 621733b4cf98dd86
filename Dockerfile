# The toolkit in a container: the install and quick-start commands of README.md, run headless.
#
#   docker build -t mlagents .
#   docker run --rm -it mlagents                  # the quick start: PPO on 3DBall, 4 environments
#   docker run --rm -it mlagents config/trainer_config.yaml --env=example-envs/builds/Basic --train
#
# Arguments after the image name replace the quick start's arguments of mlagents-learn.
# docs/Using-Docker.md explains the options, --docker-target-name and how to get the models out.
# docs/tests/test_dockerfile.py checks that the install and run commands are the README's.
FROM python:3.11-slim

# xvfb-run: with --docker-target-name, mlagents-learn starts the environment under a virtual
# screen, for Unity builds that render (cameras).
RUN apt-get update \
    && apt-get install -y --no-install-recommends xvfb xauth \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /ml-agents
COPY . .
RUN python3 -m venv .venv && .venv/bin/pip install -q -e ./ml-agents-envs -e ./example-envs -e ./ml-agents
# tensorboard and the other commands of the virtual environment, for `docker exec`.
ENV PATH=/ml-agents/.venv/bin:$PATH

# 5005: a Unity Editor on the host connects here (mlagents-learn without --env); 6006: TensorBoard.
EXPOSE 5005 6006
ENTRYPOINT [".venv/bin/mlagents-learn"]
CMD ["config/quickstart_config.yaml", "--env=example-envs/builds/3DBall", "--run-id=quickstart", "--train", "--num-envs=4"]
