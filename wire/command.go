package wire

// Command is a protocol command code (commands.md). Non-replicated commands
// travel in request header bytes 196..200; replicated ones are implied by the
// operation byte.
type Command uint32

// Command codes of protocol 0.11.0.
const (
	CmdPing                         Command = 1
	CmdGetStats                     Command = 10
	CmdGetSnapshotFile              Command = 11
	CmdGetClusterMetadata           Command = 12
	CmdDescribeOptions              Command = 13
	CmdGetMe                        Command = 20
	CmdGetClient                    Command = 21
	CmdGetClients                   Command = 22
	CmdGetUser                      Command = 31
	CmdGetUsers                     Command = 32
	CmdCreateUser                   Command = 33
	CmdDeleteUser                   Command = 34
	CmdUpdateUser                   Command = 35
	CmdUpdatePermissions            Command = 36
	CmdChangePassword               Command = 37
	CmdLoginUser                    Command = 38
	CmdLogoutUser                   Command = 39
	CmdLoginRegister                Command = 40
	CmdGetPersonalAccessTokens      Command = 41
	CmdCreatePersonalAccessToken    Command = 42
	CmdDeletePersonalAccessToken    Command = 43
	CmdLoginWithPersonalAccessToken Command = 44
	CmdLoginRegisterWithPAT         Command = 45
	CmdPollMessages                 Command = 100
	CmdSendMessages                 Command = 101
	CmdFlushUnsavedBuffer           Command = 102
	CmdGetConsumerOffset            Command = 120
	CmdStoreConsumerOffset          Command = 121
	CmdDeleteConsumerOffset         Command = 122
	CmdGetStream                    Command = 200
	CmdGetStreams                   Command = 201
	CmdCreateStream                 Command = 202
	CmdDeleteStream                 Command = 203
	CmdUpdateStream                 Command = 204
	CmdPurgeStream                  Command = 205
	CmdGetTopic                     Command = 300
	CmdGetTopics                    Command = 301
	CmdCreateTopic                  Command = 302
	CmdDeleteTopic                  Command = 303
	CmdUpdateTopic                  Command = 304
	CmdPurgeTopic                   Command = 305
	CmdCreatePartitions             Command = 402
	CmdDeletePartitions             Command = 403
	CmdDeleteSegments               Command = 503
	CmdGetConsumerGroup             Command = 600
	CmdGetConsumerGroups            Command = 601
	CmdCreateConsumerGroup          Command = 602
	CmdDeleteConsumerGroup          Command = 603
	CmdJoinConsumerGroup            Command = 604
	CmdLeaveConsumerGroup           Command = 605
	CmdSyncConsumerGroup            Command = 606
)

// Plane says how the server routes a command (architecture.md).
type Plane uint8

// Planes. DeleteSegments (503, operation 138) is counted and stamped like a
// metadata operation by the SDKs and is deduplicated by the metadata client
// table, so the registry files it under PlaneMetadata even though
// Operation(138).Metadata() is false (its request is not result-framed; its
// reply, rewritten to operation 68, is).
const (
	PlaneSession   Plane = 1 // Register, Logout
	PlaneRead      Plane = 2 // non-replicated reads and PING (operation 2)
	PlaneMetadata  Plane = 3 // replicated metadata operations 128..149
	PlanePartition Plane = 4 // partition operations 160..162
)

// String returns the plane's name.
func (p Plane) String() string {
	switch p {
	case PlaneSession:
		return "session"
	case PlaneRead:
		return "read"
	case PlaneMetadata:
		return "metadata"
	case PlanePartition:
		return "partition"
	}
	return "Plane(" + itoa(uint64(p)) + ")"
}

// CommandInfo describes one command code: how it travels and how its reply
// is framed.
type CommandInfo struct {
	Code Command
	// Name is the upstream constant name, e.g. "CREATE_TOPIC".
	Name string
	// Operation is the request's operation byte (2 for reads and the legacy logins).
	Operation Operation
	// ReplyOperation is the operation byte of a committed reply: equal to
	// Operation except for the rewrites 132->64, 136->65 and 138->68.
	ReplyOperation Operation
	Plane          Plane
	// ResultFramed reports whether a successful reply body starts with a
	// result section (for Register: when the body is non-empty).
	ResultFramed bool
	// Legacy marks the pre-0.11 login codes 38 and 44, answered with
	// eviction reason 15.
	Legacy bool
}

// Replicated reports whether the command travels with its own operation
// byte rather than as operation 2.
func (c CommandInfo) Replicated() bool { return c.Operation != OpNonReplicated }

func read(code Command, name string) CommandInfo {
	return CommandInfo{Code: code, Name: name, Operation: OpNonReplicated, ReplyOperation: OpNonReplicated, Plane: PlaneRead}
}

func meta(code Command, name string, op, reply Operation) CommandInfo {
	return CommandInfo{Code: code, Name: name, Operation: op, ReplyOperation: reply, Plane: PlaneMetadata, ResultFramed: true}
}

// commandTable is the one registry of all 51 codes, in code order.
var commandTable = [...]CommandInfo{
	read(CmdPing, "PING"),
	read(CmdGetStats, "GET_STATS"),
	read(CmdGetSnapshotFile, "GET_SNAPSHOT_FILE"),
	read(CmdGetClusterMetadata, "GET_CLUSTER_METADATA"),
	read(CmdDescribeOptions, "DESCRIBE_OPTIONS"),
	read(CmdGetMe, "GET_ME"),
	read(CmdGetClient, "GET_CLIENT"),
	read(CmdGetClients, "GET_CLIENTS"),
	read(CmdGetUser, "GET_USER"),
	read(CmdGetUsers, "GET_USERS"),
	meta(CmdCreateUser, "CREATE_USER", OpCreateUser, OpCreateUser),
	meta(CmdDeleteUser, "DELETE_USER", OpDeleteUser, OpDeleteUser),
	meta(CmdUpdateUser, "UPDATE_USER", OpUpdateUser, OpUpdateUser),
	meta(CmdUpdatePermissions, "UPDATE_PERMISSIONS", OpUpdatePermissions, OpUpdatePermissions),
	meta(CmdChangePassword, "CHANGE_PASSWORD", OpChangePassword, OpChangePassword),
	{Code: CmdLoginUser, Name: "LOGIN_USER", Operation: OpNonReplicated, ReplyOperation: OpNonReplicated, Plane: PlaneSession, Legacy: true},
	{Code: CmdLogoutUser, Name: "LOGOUT_USER", Operation: OpLogout, ReplyOperation: OpLogout, Plane: PlaneSession},
	{Code: CmdLoginRegister, Name: "LOGIN_REGISTER", Operation: OpRegister, ReplyOperation: OpRegister, Plane: PlaneSession, ResultFramed: true},
	read(CmdGetPersonalAccessTokens, "GET_PERSONAL_ACCESS_TOKENS"),
	meta(CmdCreatePersonalAccessToken, "CREATE_PERSONAL_ACCESS_TOKEN", OpCreatePersonalAccessToken, OpCreatePersonalAccessToken),
	meta(CmdDeletePersonalAccessToken, "DELETE_PERSONAL_ACCESS_TOKEN", OpDeletePersonalAccessToken, OpDeletePersonalAccessToken),
	{Code: CmdLoginWithPersonalAccessToken, Name: "LOGIN_WITH_PERSONAL_ACCESS_TOKEN", Operation: OpNonReplicated, ReplyOperation: OpNonReplicated, Plane: PlaneSession, Legacy: true},
	{Code: CmdLoginRegisterWithPAT, Name: "LOGIN_REGISTER_WITH_PAT", Operation: OpRegister, ReplyOperation: OpRegister, Plane: PlaneSession, ResultFramed: true},
	read(CmdPollMessages, "POLL_MESSAGES"),
	{Code: CmdSendMessages, Name: "SEND_MESSAGES", Operation: OpSendMessages, ReplyOperation: OpSendMessages, Plane: PlanePartition},
	read(CmdFlushUnsavedBuffer, "FLUSH_UNSAVED_BUFFER"),
	read(CmdGetConsumerOffset, "GET_CONSUMER_OFFSET"),
	{Code: CmdStoreConsumerOffset, Name: "STORE_CONSUMER_OFFSET", Operation: OpStoreConsumerOffset, ReplyOperation: OpStoreConsumerOffset, Plane: PlanePartition, ResultFramed: true},
	{Code: CmdDeleteConsumerOffset, Name: "DELETE_CONSUMER_OFFSET", Operation: OpDeleteConsumerOffset, ReplyOperation: OpDeleteConsumerOffset, Plane: PlanePartition, ResultFramed: true},
	read(CmdGetStream, "GET_STREAM"),
	read(CmdGetStreams, "GET_STREAMS"),
	meta(CmdCreateStream, "CREATE_STREAM", OpCreateStream, OpCreateStream),
	meta(CmdDeleteStream, "DELETE_STREAM", OpDeleteStream, OpDeleteStream),
	meta(CmdUpdateStream, "UPDATE_STREAM", OpUpdateStream, OpUpdateStream),
	meta(CmdPurgeStream, "PURGE_STREAM", OpPurgeStream, OpPurgeStream),
	read(CmdGetTopic, "GET_TOPIC"),
	read(CmdGetTopics, "GET_TOPICS"),
	meta(CmdCreateTopic, "CREATE_TOPIC", OpCreateTopic, OpCreateTopicWithAssignments),
	meta(CmdDeleteTopic, "DELETE_TOPIC", OpDeleteTopic, OpDeleteTopic),
	meta(CmdUpdateTopic, "UPDATE_TOPIC", OpUpdateTopic, OpUpdateTopic),
	meta(CmdPurgeTopic, "PURGE_TOPIC", OpPurgeTopic, OpPurgeTopic),
	meta(CmdCreatePartitions, "CREATE_PARTITIONS", OpCreatePartitions, OpCreatePartitionsWithAssignments),
	meta(CmdDeletePartitions, "DELETE_PARTITIONS", OpDeletePartitions, OpDeletePartitions),
	meta(CmdDeleteSegments, "DELETE_SEGMENTS", OpDeleteSegments, OpTruncatePartition),
	read(CmdGetConsumerGroup, "GET_CONSUMER_GROUP"),
	read(CmdGetConsumerGroups, "GET_CONSUMER_GROUPS"),
	meta(CmdCreateConsumerGroup, "CREATE_CONSUMER_GROUP", OpCreateConsumerGroup, OpCreateConsumerGroup),
	meta(CmdDeleteConsumerGroup, "DELETE_CONSUMER_GROUP", OpDeleteConsumerGroup, OpDeleteConsumerGroup),
	meta(CmdJoinConsumerGroup, "JOIN_CONSUMER_GROUP", OpJoinConsumerGroup, OpJoinConsumerGroup),
	meta(CmdLeaveConsumerGroup, "LEAVE_CONSUMER_GROUP", OpLeaveConsumerGroup, OpLeaveConsumerGroup),
	read(CmdSyncConsumerGroup, "SYNC_CONSUMER_GROUP"),
}

// Commands returns every registered command in code order. The returned
// slice is a copy.
func Commands() []CommandInfo {
	out := make([]CommandInfo, len(commandTable))
	copy(out, commandTable[:])
	return out
}

// LookupCommand returns the registry entry for code.
func LookupCommand(code Command) (CommandInfo, bool) {
	lo, hi := 0, len(commandTable)
	for lo < hi {
		m := (lo + hi) / 2
		switch c := commandTable[m].Code; {
		case c == code:
			return commandTable[m], true
		case c < code:
			lo = m + 1
		default:
			hi = m
		}
	}
	if c, ok := lookupRouting(code); ok {
		return c, true
	}
	return lookupExtension(code)
}

// CommandForOperation returns the command a replicated request operation
// implies (Logout -> 39, 128..162 -> their codes). Register (1) carries two
// commands told apart by body shape, and NonReplicated (2) carries its code
// in the header, so both report false, as do undefined and internal values.
func CommandForOperation(op Operation) (CommandInfo, bool) {
	if op == OpRegister || op == OpNonReplicated || op.Internal() || op == OpReserved {
		return CommandInfo{}, false
	}
	for _, c := range commandTable {
		if c.Operation == op {
			return c, true
		}
	}
	return CommandInfo{}, false
}

// String returns the command's upstream name, or "Command(N)" when unknown.
func (c Command) String() string {
	if info, ok := LookupCommand(c); ok {
		return info.Name
	}
	return "Command(" + itoa(uint64(c)) + ")"
}
