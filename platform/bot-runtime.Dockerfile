# The runtime image a sandboxed bot runs in under the Docker backend (quatresept/bot-runtime:1):
# python3 and node, the standard libraries only, a user 1000. The worker starts one container per
# seat from it with no network, a read-only root and the bot's folder read-only at /bot.
FROM python:3.11-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends nodejs \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --uid 1000 --create-home bot
USER 1000:1000
WORKDIR /bot
