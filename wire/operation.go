package wire

// Operation is the operation discriminant at request header offset 176 and
// reply header offset 208 (framing.md, "Operation discriminants").
type Operation uint8

// Operation values. 0 is reserved; 64..127 are server-internal and never
// accepted from a client; 64, 65 and 68 appear in replies.
const (
	OpReserved                        Operation = 0
	OpRegister                        Operation = 1
	OpNonReplicated                   Operation = 2
	OpLogout                          Operation = 3
	OpCreateTopicWithAssignments      Operation = 64
	OpCreatePartitionsWithAssignments Operation = 65
	OpRemoveConsumerGroupMember       Operation = 66
	OpCompleteConsumerGroupRevocation Operation = 67
	OpTruncatePartition               Operation = 68
	OpCreateStream                    Operation = 128
	OpUpdateStream                    Operation = 129
	OpDeleteStream                    Operation = 130
	OpPurgeStream                     Operation = 131
	OpCreateTopic                     Operation = 132
	OpUpdateTopic                     Operation = 133
	OpDeleteTopic                     Operation = 134
	OpPurgeTopic                      Operation = 135
	OpCreatePartitions                Operation = 136
	OpDeletePartitions                Operation = 137
	OpDeleteSegments                  Operation = 138
	OpCreateConsumerGroup             Operation = 139
	OpDeleteConsumerGroup             Operation = 140
	OpCreateUser                      Operation = 141
	OpUpdateUser                      Operation = 142
	OpDeleteUser                      Operation = 143
	OpChangePassword                  Operation = 144
	OpUpdatePermissions               Operation = 145
	OpCreatePersonalAccessToken       Operation = 146
	OpDeletePersonalAccessToken       Operation = 147
	OpJoinConsumerGroup               Operation = 148
	OpLeaveConsumerGroup              Operation = 149
	OpSendMessages                    Operation = 160
	OpStoreConsumerOffset             Operation = 161
	OpDeleteConsumerOffset            Operation = 162
)

var operationNames = map[Operation]string{
	OpReserved: "Reserved", OpRegister: "Register", OpNonReplicated: "NonReplicated", OpLogout: "Logout",
	OpCreateTopicWithAssignments: "CreateTopicWithAssignments", OpCreatePartitionsWithAssignments: "CreatePartitionsWithAssignments",
	OpRemoveConsumerGroupMember: "RemoveConsumerGroupMember", OpCompleteConsumerGroupRevocation: "CompleteConsumerGroupRevocation",
	OpTruncatePartition: "TruncatePartition",
	OpCreateStream:      "CreateStream", OpUpdateStream: "UpdateStream", OpDeleteStream: "DeleteStream", OpPurgeStream: "PurgeStream",
	OpCreateTopic: "CreateTopic", OpUpdateTopic: "UpdateTopic", OpDeleteTopic: "DeleteTopic", OpPurgeTopic: "PurgeTopic",
	OpCreatePartitions: "CreatePartitions", OpDeletePartitions: "DeletePartitions", OpDeleteSegments: "DeleteSegments",
	OpCreateConsumerGroup: "CreateConsumerGroup", OpDeleteConsumerGroup: "DeleteConsumerGroup",
	OpCreateUser: "CreateUser", OpUpdateUser: "UpdateUser", OpDeleteUser: "DeleteUser", OpChangePassword: "ChangePassword",
	OpUpdatePermissions: "UpdatePermissions", OpCreatePersonalAccessToken: "CreatePersonalAccessToken",
	OpDeletePersonalAccessToken: "DeletePersonalAccessToken", OpJoinConsumerGroup: "JoinConsumerGroup",
	OpLeaveConsumerGroup: "LeaveConsumerGroup", OpSendMessages: "SendMessages",
	OpStoreConsumerOffset: "StoreConsumerOffset", OpDeleteConsumerOffset: "DeleteConsumerOffset",
}

// String returns the operation's upstream name, or "Operation(N)" when undefined.
func (o Operation) String() string {
	if s, ok := operationNames[o]; ok {
		return s
	}
	return "Operation(" + itoa(uint64(o)) + ")"
}

// Defined reports whether o is a declared discriminant (0..3, 64..68,
// 128..149, 160..162). Clients treat any other reply operation as a protocol error.
func (o Operation) Defined() bool { _, ok := operationNames[o]; return ok }

// Internal reports whether o is in the server-internal range 64..127.
func (o Operation) Internal() bool { return o >= 64 && o < 128 }

// Metadata reports whether o belongs to the metadata plane: internal
// operations and 128..149 except 138 (DeleteSegments is deliberately not
// metadata).
func (o Operation) Metadata() bool {
	return o.Internal() || (o >= 128 && o <= 149 && o != OpDeleteSegments)
}

// Partition reports whether o belongs to the partition plane (op >= 160).
func (o Operation) Partition() bool { return o >= 160 }

// Session reports whether o is a session operation (Register or Logout).
func (o Operation) Session() bool { return o == OpRegister || o == OpLogout }

// ClientAllowed reports whether a client may send o: defined and neither
// reserved nor internal.
func (o Operation) ClientAllowed() bool { return o.Defined() && o != OpReserved && !o.Internal() }

// ResultFramed reports whether a reply carrying operation o starts with a
// result section: metadata (including internal rewrites), 161 and 162.
// Register replies are result-framed when their body is non-empty; that
// rule depends on the body and is applied by the caller.
func (o Operation) ResultFramed() bool {
	return o.Metadata() || o == OpStoreConsumerOffset || o == OpDeleteConsumerOffset
}

// itoa formats v in decimal without fmt (hot-path friendly).
func itoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return string(b[i:])
}
