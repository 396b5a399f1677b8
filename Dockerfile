# gantry worker image: Debian 12 with every dependency from Debian's packages.
#   docker build -t gantry .
#   docker run --rm -v $PWD/runs:/runs gantry train --epochs 1 --out /runs/first
FROM debian:12
WORKDIR /src/gantry
COPY scripts/install_deps.sh scripts/install_deps.sh
RUN bash scripts/install_deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DGANTRY_NATIVE=OFF -DGANTRY_BUILD_TESTS=OFF \
        -DGANTRY_BUILD_BENCHMARKS=OFF \
    && cmake --build build -j"$(nproc)" \
    && install -m 0755 build/bin/gantry-worker /usr/local/bin/
ENTRYPOINT ["gantry-worker"]
