"""Lists a gantry coordinator's jobs from Python: the API is plain gRPC.

Usage: list_jobs.py GENERATED_DIR HOST:PORT [TOKEN]
GENERATED_DIR holds the gantry/v1/*_pb2*.py modules generated from proto/ with
python3-grpc-tools. Prints one "ID STATE" line per job, in submission order, following
the pages of ListJobs.
"""
import sys

sys.path.insert(0, sys.argv[1])

import grpc  # noqa: E402
from gantry.v1 import coordinator_pb2, coordinator_pb2_grpc, job_pb2  # noqa: E402


def main():
    address = sys.argv[2]
    metadata = [("authorization", "Bearer " + sys.argv[3])] if len(sys.argv) > 3 else []
    with grpc.insecure_channel(address) as channel:
        stub = coordinator_pb2_grpc.CoordinatorStub(channel)
        request = coordinator_pb2.ListJobsRequest(page_size=1)
        while True:
            page = stub.ListJobs(request, metadata=metadata, timeout=10)
            for job in page.jobs:
                print(job.id, job_pb2.JobState.Name(job.state))
            if not page.next_page_token:
                return 0
            request.page_token = page.next_page_token


if __name__ == "__main__":
    sys.exit(main())
