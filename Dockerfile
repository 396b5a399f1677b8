# gantry's container images, from Debian 12 packages alone. Two targets:
#   coordinator  gantry-coordinator and the gantry CLI: no oneDNN, CUDA or MPI in it
#   worker       gantry-worker with Open MPI 4.1, sshd on port 2222 for the Kubeflow MPI
#                Operator (non-root user "gantry", uid 1000), and the gantry CLI
#
#   docker build --target coordinator -t gantry-coordinator .
#   docker build --target worker -t gantry-worker .
#   scripts/build_images.sh      # buildah, no Docker daemon, works without a registry
#
# Build arguments:
#   BASE         a Debian 12 image (default debian:bookworm-slim)
#   GANTRY_CUDA  OFF (default); ON builds the worker's CUDA backend and NCCL communicator,
#                which needs a BASE with the CUDA toolkit and NCCL in /usr/local/cuda
#                (their libraries are copied into the worker image)
#   RUNTIME_BASE the runtime images' base (default: BASE). The CUDA variant builds on a
#                base with the toolkit but needs only the libraries it links, which the
#                build stage copies out (cuBLAS, cudart, NCCL): give it a plain Debian 12
#                image here and the worker image is ~1.3 GB instead of the toolkit's ~4 GB
#   JOBS         parallel compile jobs (default 2)
# Binaries are portable (GANTRY_NATIVE=OFF: no -march=native).
ARG BASE=debian:bookworm-slim
ARG RUNTIME_BASE=${BASE}

# --- The control plane: gantry-coordinator and gantry, built without the engine. ---
FROM ${BASE} AS control-build
ARG JOBS=2
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config libabsl-dev libspdlog-dev libyaml-cpp-dev libcli11-dev \
      nlohmann-json3-dev libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc libsqlite3-dev \
      libcpp-httplib-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DGANTRY_NATIVE=OFF -DGANTRY_WORKER=OFF \
      -DGANTRY_BUILD_TESTS=OFF -DGANTRY_BUILD_BENCHMARKS=OFF \
 && cmake --build /build -j"${JOBS}" --target gantry-coordinator gantry \
 && install -D -m 0755 -t /out/bin /build/bin/gantry-coordinator /build/bin/gantry \
 && scripts/runtime_deps.sh /out /out/bin/*

# --- The worker: gantry-worker (and gantry) with oneDNN and Open MPI. ---
FROM ${BASE} AS worker-build
ARG JOBS=2
ARG GANTRY_CUDA=OFF
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config libabsl-dev libspdlog-dev libyaml-cpp-dev libcli11-dev \
      nlohmann-json3-dev libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc libsqlite3-dev \
      libcpp-httplib-dev libeigen3-dev zlib1g-dev libpng-dev libjpeg62-turbo-dev libwebp-dev libopenmpi-dev openmpi-bin \
      libdnnl-dev ocl-icd-opencl-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DGANTRY_NATIVE=OFF -DGANTRY_CUDA=${GANTRY_CUDA} \
      -DGANTRY_BUILD_TESTS=OFF -DGANTRY_BUILD_BENCHMARKS=OFF \
 && cmake --build /build -j"${JOBS}" --target gantry-worker gantry \
 && install -D -m 0755 -t /out/bin /build/bin/gantry-worker /build/bin/gantry \
 && scripts/runtime_deps.sh /out /out/bin/*

# --- Runtime images: the libraries the binaries link (runtime_deps.sh lists their
# packages), the default dataset (Fashion-MNIST under /usr/share/datasets, the chart's
# data root), and the non-root user the chart runs as. ---
FROM ${RUNTIME_BASE} AS coordinator
COPY --from=control-build /out/packages.txt /usr/local/share/gantry/runtime-packages.txt
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates dataset-fashion-mnist \
      $(cat /usr/local/share/gantry/runtime-packages.txt) \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --uid 1000 --user-group --create-home --shell /usr/sbin/nologin gantry
COPY --from=control-build /out/bin/ /usr/local/bin/
USER 1000:1000
WORKDIR /home/gantry
EXPOSE 50051
ENTRYPOINT ["gantry-coordinator"]
CMD ["--help"]

FROM ${RUNTIME_BASE} AS worker
COPY --from=worker-build /out/packages.txt /usr/local/share/gantry/runtime-packages.txt
# sshd runs as "gantry" from its own folder: its host key, a config with port 2222,
# StrictModes off (the operator's key Secret is mounted root-owned at ~/.ssh) and no
# PAM (a non-root sshd cannot use it; the password field "*" keeps the account usable
# without a password). The ssh client connects to port 2222 and keeps no known_hosts.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates dataset-fashion-mnist \
      openmpi-bin openssh-server openssh-client $(cat /usr/local/share/gantry/runtime-packages.txt) \
 && rm -rf /var/lib/apt/lists/* /etc/ssh/ssh_host_*_key* \
 && useradd --uid 1000 --user-group --create-home --shell /bin/bash gantry \
 && usermod --password '*' gantry \
 && mkdir -p /run/sshd /home/gantry/.sshd \
 && ssh-keygen -q -t ed25519 -N '' -f /home/gantry/.sshd/ssh_host_ed25519_key \
 && printf '%s\n' 'Port 2222' 'HostKey /home/gantry/.sshd/ssh_host_ed25519_key' 'PidFile /tmp/sshd.pid' \
      'AuthorizedKeysFile /home/gantry/.ssh/authorized_keys' 'StrictModes no' 'UsePAM no' \
      'PasswordAuthentication no' 'KbdInteractiveAuthentication no' 'PermitRootLogin no' \
      'X11Forwarding no' 'PrintMotd no' >/home/gantry/.sshd/sshd_config \
 && printf '%s\n' 'Host *' '    Port 2222' '    StrictHostKeyChecking no' '    UserKnownHostsFile /dev/null' \
      '    LogLevel ERROR' >/etc/ssh/ssh_config.d/gantry.conf \
 && chown -R gantry:gantry /home/gantry
COPY --from=worker-build /out/lib/ /usr/local/lib/gantry/
RUN echo /usr/local/lib/gantry >/etc/ld.so.conf.d/gantry.conf && ldconfig
COPY --from=worker-build /out/bin/ /usr/local/bin/
# Containers usually forbid the cross-process memory copy Open MPI's shared-memory
# transport tries first; mpirun passes OMPI_MCA_* settings on to every rank.
ENV OMPI_MCA_btl_vader_single_copy_mechanism=none
USER 1000:1000
WORKDIR /home/gantry
EXPOSE 2222
ENTRYPOINT ["gantry-worker"]
CMD ["--help"]
