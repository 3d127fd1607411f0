# The runtime image a sandboxed bot runs in under the Docker backend (quatresept/bot-runtime:1):
# python3 and node, the standard libraries only, a user 1000. The worker starts one container per
# seat from it with no network, a read-only root and the bot's folder read-only at /bot.
# The base is a build argument (default: the official image); any Debian-like image with python3.
ARG PYTHON_IMAGE=python:3.11-slim
FROM ${PYTHON_IMAGE}
RUN apt-get update \
    && apt-get install -y --no-install-recommends nodejs \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --uid 1000 --create-home bot
USER 1000:1000
WORKDIR /bot
