/**
 * A partition assigner that keeps partition N of every subscribed topic on the same member.
 *
 * trawl.jobs and trawl.pages are both keyed by job id and have the same partition count, so a
 * job's JobDispatched and its PageFetched events sit in partitions with the same number. The
 * frontier holds each job's state in one place only if it owns that partition number in *both*
 * topics; kafkajs's default round-robin assigner spreads topic-partitions without regard to
 * that (it happens to line up only when the member count divides the partition count).
 */
import type { PartitionAssigner } from 'kafkajs';
import { AssignerProtocol } from './kafkajs.ts';

export const CO_PARTITIONED_ASSIGNER = 'TrawlCoPartitioned';

export const CoPartitionedAssigner: PartitionAssigner = ({ cluster }) => ({
  name: CO_PARTITIONED_ASSIGNER,
  version: 1,
  async assign({ members, topics }) {
    const memberIds = members.map((m) => m.memberId).sort();
    const assignment = new Map<string, Record<string, number[]>>(memberIds.map((id) => [id, {}]));
    for (const topic of topics) {
      const partitions = cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId).sort((a, b) => a - b);
      for (const partition of partitions) {
        const owner = memberIds[partition % memberIds.length]!;
        const own = assignment.get(owner)!;
        (own[topic] ??= []).push(partition);
      }
    }
    return [...assignment].map(([memberId, a]) => ({
      memberId,
      memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 1, assignment: a, userData: Buffer.alloc(0) }),
    }));
  },
  protocol({ topics }) {
    return {
      name: CO_PARTITIONED_ASSIGNER,
      metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: Buffer.alloc(0) }),
    };
  },
});
