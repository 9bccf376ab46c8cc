# Stands in for python:3.11-slim-bookworm: Debian's Python 3.11 with venv, linked at
# /usr/local/bin as the official image has it (the project's Dockerfile makes its venv from
# `python3`, and the venv's python is a link to this interpreter).
ARG BASE_IMAGE=autograder-offline/debian:bookworm
FROM ${BASE_IMAGE}
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && ln -s /usr/bin/python3.11 /usr/local/bin/python3.11 \
    && ln -s python3.11 /usr/local/bin/python3 \
    && ln -s python3.11 /usr/local/bin/python
ENV LANG=C.UTF-8
CMD ["python3"]
